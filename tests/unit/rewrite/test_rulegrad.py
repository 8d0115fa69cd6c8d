"""Rules' gradient classes (rewrite/rulegrad.py): measured by sampling, declared with `@rule(grad=...)`, recorded for the built-in library."""
from __future__ import annotations

import json

import pytest
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, RuleError, Tensor, load_rules, rule
from eqsat_test.rewrite.rulegrad import GRAD_CLASSES_FILE, check_grads, classes_of, grad_class, read_recorded


@rule(family="activation", numerics="exact", grad="exact")
def relu_clamp_claimed_exact(x: Tensor(dtype=FLOATING)):
    """relu's gradient at 0 is 0, clamp(min=0)'s is 1: a tie changes the gradient."""
    return torch.relu(x), torch.clamp(x, min=0)


@rule(family="activation", numerics="exact", grad="edge")
def relu_clamp_declared_edge(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.clamp(x, min=0)


@rule(family="algebra", numerics="exact")
def square_detached(x: Tensor(dtype=FLOATING)):
    """The same values, half the gradient: detach() cuts a path."""
    return x * x, x * x.detach()


@rule(family="algebra", numerics="approximate")
def reassociated(a: Tensor(dtype=FLOATING), b: Tensor(dtype=FLOATING), c: Tensor(dtype=FLOATING)):
    return (a + b) * c, a * c + b * c


def test_a_kink_is_edge_and_a_false_exact_declaration_fails():
    r = grad_class(relu_clamp_claimed_exact)
    assert r.measured == "edge" and not r.ok
    assert "d/dx differs" in r.example and "normal-range" not in r.example
    assert grad_class(relu_clamp_declared_edge).ok


def test_a_cut_gradient_is_different():
    r = grad_class(square_detached)
    assert r.measured == "different" and r.example.startswith("normal-range values")


def test_rounding_is_not_a_gradient_difference():
    assert grad_class(reassociated).measured == "exact"


def test_grad_declaration_is_validated():
    with pytest.raises(RuleError, match="grad must be one of"):
        @rule(family="algebra", numerics="exact", grad="same")
        def bad(x: Tensor()):
            return x, x


def test_classes_come_from_declaration_then_record_then_measurement(tmp_path, monkeypatch):
    path = tmp_path / "classes.json"
    res = check_grads([square_detached, relu_clamp_declared_edge], record=False)
    assert [g.measured for g in res] == ["different", "edge"]
    got = classes_of([square_detached, relu_clamp_declared_edge, reassociated])
    assert got == {"square_detached": "different", "relu_clamp_declared_edge": "edge", "reassociated": "exact"}
    # a recorded class is used where the rule's source is the recorded one
    path.write_text(json.dumps({"rules": {"square_detached": {"class": "exact", "source": square_detached.source_hash()},
                                          "reassociated": {"class": "different", "source": "stale"}}}))
    monkeypatch.setattr("eqsat_test.rewrite.rulegrad.GRAD_CLASSES_FILE", path)
    assert read_recorded(path)["square_detached"]["class"] == "exact"
    got = classes_of([square_detached, reassociated], measure_missing=False)
    assert got == {"square_detached": "exact"}  # the stale entry is not used


def test_every_builtin_rule_has_a_recorded_class():
    """rules/_grad_classes.json covers the library at its current sources (`eqsat-test rules check --grad --record`)."""
    recorded = read_recorded(GRAD_CLASSES_FILE)
    missing = [r.name for r in load_rules(None) if r.grad is None and
               (recorded.get(r.name) or {}).get("source") != r.source_hash()]
    assert missing == [], f"{len(missing)} rules without a current recorded gradient class, e.g. {missing[:5]}"

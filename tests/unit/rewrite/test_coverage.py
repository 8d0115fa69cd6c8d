"""rewrite.coverage: ops, ops no rule touches, distinct variants per graph; stratified extraction by rule family."""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from eqsat_test.rewrite.coverage import coverage, load_compiled
from eqsat_test.rewrite.extract import stratified_choice

REPO = Path(__file__).resolve().parents[3]

RULES = '''"""Two small rule families for the coverage test."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_through_exp(x: Tensor(rank=2, dtype=FLOATING)):
    return torch.exp(x.t()), torch.exp(x).t()


@rule(family="spelling", numerics="exact", bidirectional=True)
def exp_spelling(x: Tensor(dtype=FLOATING)):
    return torch.exp(x), x.exp()


@rule(family="neutral", numerics="exact")
def neg_neg(x: Tensor(dtype=FLOATING)):
    return -(-x), x
'''

MODEL = '''"""Model for the coverage test."""
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.exp(x.t()) * 2.0 + torch.sigmoid(x).sum()


def get_inputs():
    return [torch.randn(4, 3)]
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cov")
    (d / "rules.py").write_text(RULES)
    (d / "model.py").write_text(MODEL)
    return d


def test_coverage_lists_ops_untouched_ops_and_variants(files):
    rules, compiled = load_compiled([str(files / "rules.py")])
    cov = coverage(files / "model.py", compiled=(rules, compiled), variants=8)
    assert not cov.error and len(cov.graphs) == 1
    g = cov.graphs[0]
    assert g.ops == {"Tensor.t": 1, "Tensor.sum": 1, "operator.add": 1, "operator.mul": 1,
                     "torch.exp": 1, "torch.sigmoid": 1}
    # no rule has sigmoid, mul, add or sum on a side it rewrites from
    assert g.untouched == ["Tensor.sum", "operator.add", "operator.mul", "torch.sigmoid"]
    assert set(g.not_rewritten) >= set(g.untouched) and "torch.exp" not in g.not_rewritten
    assert 1 <= g.distinct_variants <= 8 and g.asked == 8
    assert set(g.families_fired) == {"layout", "spelling"}
    assert set(g.families_in_variants) == {"layout", "spelling"}  # stratified: each shows up
    d = cov.as_dict()
    assert d["untouched"] == g.untouched and d["ops"]["torch.exp"] == 1
    assert asdict(g)["distinct_variants"] == g.distinct_variants


def test_coverage_of_a_model_that_does_not_load(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('nope')\n")
    cov = coverage(bad, compiled=([], []), variants=4)
    assert cov.graphs == [] and "nope" in cov.error


def test_stratified_choice_covers_rare_labels_first():
    items = list("abcdefgh")
    labels = [{"x"}, {"x"}, {"x"}, {"x"}, {"x", "y"}, {"x"}, {"z"}, {"x"}]
    got = stratified_choice(items, 3, labels)
    assert got == ["a", "e", "g"]  # z and y (rare) first, then the earliest; sampling order kept
    assert stratified_choice(items, 8, labels) == items
    assert stratified_choice(items, 1, labels) == ["e"]

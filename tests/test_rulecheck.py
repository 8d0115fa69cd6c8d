"""Tests for rewrite/rulecheck.py (the rule soundness checker) and rewrite/ruleauthor.py (the rule scaffold)."""
import dataclasses
import importlib.util

import pytest
import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruleauthor import new_rule
from eqsat_test.rewrite.rulecheck import CheckResult, check_rule, check_rules, find_example, lint_rule
from eqsat_test.rewrite.ruledsl import (
    FLOATING,
    INTEGRAL,
    NUMERIC,
    RuleError,
    Scalar,
    Tensor,
    load_rule_file,
    rule,
)

# ---- rules that are wrong, one per numerics class ------------------------------------------


@rule(family="algebra", numerics="exact")
def add_reassociated_claimed_exact(a: Tensor(dtype=FLOATING), b: Tensor(dtype=FLOATING),
                                   c: Tensor(dtype=FLOATING)):
    return (a + b) + c, a + (b + c)


@rule(family="algebra", numerics="approximate")
def add_reassociated_approximate(a: Tensor(dtype=FLOATING), b: Tensor(dtype=FLOATING),
                                 c: Tensor(dtype=FLOATING)):
    return (a + b) + c, a + (b + c)


@rule(family="activation", numerics="ieee-edge")
def sigmoid_formula_claimed_ieee_edge(x: Tensor(dtype="float32")):
    """Only approximately equal on ordinary numbers: not ieee-edge."""
    return torch.sigmoid(x), 1 / (1 + torch.exp(-x))


@rule(family="misc", numerics="ieee-edge")
def floor_is_round_claimed_ieee_edge(x: Tensor(dtype=FLOATING)):
    return torch.floor(x), torch.round(x)


@rule(family="algebra", numerics="approximate")
def double_is_increment(x: Tensor(dtype=FLOATING)):
    return x * 2, x + 1


@rule(family="dtype-logic", numerics="exact")
def mul_float_one_on_ints(x: Tensor(dtype=INTEGRAL)):
    """x * 1.0 turns an integer tensor into a float one."""
    return x * 1.0, x


@rule(family="neutral", numerics="exact")
def add_zero_claimed_exact(x: Tensor(dtype=FLOATING)):
    """-0.0 + 0 is +0.0: not bitwise."""
    return x + 0, x


@rule(family="neutral", numerics="ieee-edge")
def add_zero_ieee_edge(x: Tensor(dtype=FLOATING)):
    return x + 0, x


@rule(family="layout", numerics="exact")
def reshape_to_view(x: Tensor(rank=(2, 3))):
    """view raises on non-contiguous inputs where reshape copies."""
    return x.reshape(-1), x.view(-1)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def bmm_matmul_both_ways(x: Tensor(rank=3, dtype=FLOATING), y: Tensor(rank=3, dtype=FLOATING)):
    """matmul broadcasts batch dimensions, bmm does not: rhs -> lhs can break a program."""
    return torch.bmm(x, y), x @ y


@rule(family="layout", numerics="exact")
def transpose_of_rank3(x: Tensor(rank=3)):
    """.t() raises on every rank-3 input: no sample is ever valid."""
    return x.t(), x.transpose(0, 1)


@rule(family="reduction", numerics="exact", bidirectional=True)
def full_max_is_amax_claimed_exact(x: Tensor(dtype=FLOATING)):
    """x.max() and x.amax() break a (+0.0, -0.0) tie differently: ieee-edge, not exact."""
    return x.max(), x.amax()


# ---- rules that are right --------------------------------------------------------------------


@rule(family="layout", numerics="exact")
def double_transpose(x: Tensor(rank=2)):
    return x.t().t(), x


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_half_is_sqrt(x: Tensor(dtype=("float32", "float64"))):
    return x ** 0.5, torch.sqrt(x)


@rule(family="concat", numerics="exact")
def cat_of_slices(x: Tensor(rank=2), k: Scalar(kind="int", values=(1, 2))):
    return torch.cat([x[:, :k], x[:, k:]], 1), x


@rule(family="activation", numerics="ieee-edge", bidirectional=True)
def relu_is_where(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.where(x > 0, x, 0.0)


@rule(family="linalg", numerics="approximate", same_shape=False)
def linear_is_matmul_add(x: Tensor(rank=2, dtype="float32"), w: Tensor(rank=2, dtype="float32"),
                         b: Tensor(rank=1, dtype="float32")):
    return F.linear(x, w, b), x @ w.t() + b


@rule(family="algebra", numerics="approximate", same_shape=False, tags=("ac",))
def add_commutes_claimed_approximate(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x + y, y + x


# ---- structurally broken rules -----------------------------------------------------------------


@rule(family="misc", numerics="exact")
def rhs_uses_unbound(x: Tensor(), y: Tensor()):
    return x * 1, y


@rule(family="layout", numerics="exact", bidirectional=True)
def bidirectional_bare(x: Tensor(rank=2)):
    return x.t().t(), x


# ----------------------------------------------------------------------------------------------


def _fails(r, *words):
    res = check_rule(r)
    assert not res.ok, f"{r.name} should fail"
    assert res.counterexample
    for w in words:
        assert w in res.counterexample, res.counterexample
    return res


def test_exact_rule_that_is_only_approximate_fails():
    res = _fails(add_reassociated_claimed_exact, "not bitwise equal", "lhs", "rhs")
    assert res.claimed == "exact"
    assert "inputs" in res.counterexample  # shows the inputs that break it


def test_same_rule_passes_when_claimed_approximate():
    assert check_rule(add_reassociated_approximate).ok


def test_ieee_edge_rule_wrong_on_normal_numbers_fails():
    _fails(sigmoid_formula_claimed_ieee_edge, "without special values")
    _fails(floor_is_round_claimed_ieee_edge, "ieee-edge")


def test_plainly_wrong_approximate_rule_fails():
    _fails(double_is_increment, "not close")


def test_dtype_changing_rule_fails():
    _fails(mul_float_one_on_ints, "dtype differs")


def test_signed_zero_fails_exact_but_passes_ieee_edge():
    res = _fails(add_zero_claimed_exact, "not bitwise equal")
    assert "-0.0" in res.counterexample or "0.0" in res.counterexample
    assert check_rule(add_zero_ieee_edge).ok


def test_signed_zero_ties_in_reductions_are_found():
    assert torch.signbit(torch.tensor([0.0, -0.0]).max()) != torch.signbit(torch.tensor([0.0, -0.0]).amax())
    assert any(not check_rule(full_max_is_amax_claimed_exact, seed=s).ok for s in range(3))


def test_rhs_raising_fails_with_the_exception():
    _fails(reshape_to_view, "rhs raises", "RuntimeError", "non-contiguous")


def test_bidirectional_rule_whose_rhs_matches_more_fails():
    _fails(bmm_matmul_both_ways, "bidirectional", "lhs raises")


def test_rule_without_any_valid_sample_fails():
    res = _fails(transpose_of_rank3, "no valid sample")
    assert res.samples == 0 and res.skipped > 0


@pytest.mark.parametrize("r", [double_transpose, pow_half_is_sqrt, cat_of_slices, relu_is_where,
                               linear_is_matmul_add], ids=lambda r: r.name)
def test_correct_rules_pass(r):
    res = check_rule(r)
    assert res.ok, res.counterexample
    assert res.samples > 0 and res.counterexample is None


def test_lhs_exceptions_are_skipped_not_failed():
    res = check_rule(linear_is_matmul_add)  # mismatched shapes make F.linear raise
    assert res.ok and res.skipped > 0 and res.samples > 0


def test_note_for_approximate_rule_that_is_bitwise_exact():
    res = check_rule(add_commutes_claimed_approximate)
    assert res.ok
    assert res.note and "bitwise exact" in res.note


def test_structural_problems_fail():
    assert lint_rule(rhs_uses_unbound)
    res = _fails(rhs_uses_unbound, "does not bind")
    assert res.samples == 0
    assert any("bare variable" in p for p in lint_rule(bidirectional_bare))
    assert not lint_rule(double_transpose)


def test_result_is_frozen_and_deterministic():
    a = check_rule(add_reassociated_claimed_exact, seed=3)
    b = check_rule(add_reassociated_claimed_exact, seed=3)
    assert isinstance(a, CheckResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.ok = True  # type: ignore[misc]
    assert (a.ok, a.samples, a.counterexample) == (b.ok, b.samples, b.counterexample)


def test_check_rules_keeps_order_and_restores_threads():
    before = torch.get_num_threads()
    res = check_rules([double_transpose, double_is_increment], samples=20)
    assert [r.rule for r in res] == ["double_transpose", "double_is_increment"]
    assert [r.ok for r in res] == [True, False]
    assert torch.get_num_threads() == before


def test_samples_cover_every_dtype():
    seen = set()

    @rule(family="misc", numerics="exact")
    def spy(x: Tensor(dtype=NUMERIC)):
        return x.clone(), x

    from eqsat_test.rewrite import rulecheck

    for o in rulecheck.sample_outcomes(spy, 0, 40):
        seen.add((o.inputs["x"].dtype, o.sample.special))
    assert {d for d, _ in seen} == {getattr(torch, n) for n in NUMERIC}
    assert all((d, True) in seen and (d, False) in seen for d, _ in seen)


def test_find_example_runs_both_sides():
    ex = find_example(linear_is_matmul_add)
    assert ex is not None
    lhs, rhs = linear_is_matmul_add.fn(**ex)
    assert lhs.shape == rhs.shape


# ---- scaffold ----------------------------------------------------------------------------------


def test_new_rule_scaffold_loads_passes_check_and_its_test(tmp_path):
    paths = new_rule("my_new_rule", tmp_path, family="algebra")
    assert [p.name for p in paths] == ["my_new_rule.py", "test_my_new_rule.py"]
    text = paths[0].read_text()
    assert text.startswith('"""') and "How to edit" in text
    rules = load_rule_file(paths[0])
    assert [r.name for r in rules] == ["my_new_rule"]
    assert rules[0].family == "algebra"
    for r in rules:
        res = check_rule(r)
        assert res.ok, res.counterexample
    # the generated test runs and passes
    spec = importlib.util.spec_from_file_location("scaffold_test_mod", paths[1])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.test_file_defines_rules()
    for r in mod.RULES:
        mod.test_rule_passes_check(r)


def test_new_rule_refuses_to_overwrite(tmp_path):
    new_rule("twice", tmp_path)
    before = (tmp_path / "twice.py").read_text()
    with pytest.raises(RuleError, match="overwrite"):
        new_rule("twice", tmp_path)
    assert (tmp_path / "twice.py").read_text() == before
    (tmp_path / "twice.py").unlink()
    with pytest.raises(RuleError, match="test_twice.py"):  # the test file alone also blocks
        new_rule("twice", tmp_path)
    assert not (tmp_path / "twice.py").exists()


@pytest.mark.parametrize("bad", ["1abc", "my-rule", "class", "", "a b"])
def test_new_rule_rejects_bad_names(tmp_path, bad):
    with pytest.raises(RuleError):
        new_rule(bad, tmp_path)
    assert not list(tmp_path.iterdir())


def test_new_rule_rejects_unknown_family(tmp_path):
    with pytest.raises(RuleError, match="family"):
        new_rule("ok_name", tmp_path, family="nonsense")

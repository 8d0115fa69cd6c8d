"""Tests for the edge samples of rewrite/rulecheck.py: 0-dim and mixed-dtype operands, INT_MIN/INT_MAX, signed zeros, large multithreaded shapes."""
import random

import torch

from eqsat_test.rewrite import rulecheck
from eqsat_test.rewrite.rulecheck import APPROX_TOL, LARGE_NUMEL, LARGE_THREADS, check_rule
from eqsat_test.rewrite.ruledsl import FLOATING, SIGNED_INT, Tensor, rule

# ---- one deliberately wrong rule per numerics class ------------------------------------------


@rule(family="algebra", numerics="exact")
def wrong_exact_sum_halves(x: Tensor(rank=1, dtype="float32")):
    """Reassociated sum, claimed bitwise: false."""
    return x.sum(), x[::2].sum() + x[1::2].sum()


@rule(family="algebra", numerics="ieee-edge")
def wrong_ieee_edge_exp_minus_one(x: Tensor(dtype="float32")):
    """expm1 differs from exp - 1 on ordinary numbers: not ieee-edge."""
    return torch.expm1(x), torch.exp(x) - 1


@rule(family="algebra", numerics="approximate")
def wrong_approximate_off_by_tiny(x: Tensor(dtype=("float32", "float64"))):
    """x vs x * (1 + 1e-3): far outside every approximate tolerance."""
    return x * 2, x * 2.002


def test_a_wrong_rule_of_each_class_is_caught():
    for r, words in ((wrong_exact_sum_halves, "claimed exact"),
                     (wrong_ieee_edge_exp_minus_one, "claimed ieee-edge"),
                     (wrong_approximate_off_by_tiny, "claimed approximate")):
        res = check_rule(r)
        assert not res.ok, r.name
        assert words in res.counterexample, res.counterexample


def test_approximate_tolerance_lives_in_one_table():
    assert set(APPROX_TOL) == {torch.float64, torch.float32, torch.float16, torch.bfloat16}
    assert rulecheck._tol(torch.float32, {}) == APPROX_TOL[torch.float32]


# ---- 0-dim, mixed dtypes ------------------------------------------------------------------------


@rule(family="algebra", numerics="exact", same_shape=False)
def mul_commutes_any_rank(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x * y, y * x


@rule(family="algebra", numerics="exact", same_shape=False)
def mul_commutes_dimensioned(x: Tensor(rank=(1, 2, 3, 4), dtype=FLOATING),
                             y: Tensor(rank=(1, 2, 3, 4), dtype=FLOATING)):
    return x * y, y * x


def test_zero_dim_mixed_dtype_mul_commute_is_caught_when_claimed_exact():
    res = check_rule(mul_commutes_any_rank)
    assert not res.ok
    assert "[]" in res.counterexample  # a 0-dim operand (shape [])
    assert "claimed exact" in res.counterexample
    assert check_rule(mul_commutes_dimensioned).ok  # the library's fix: never 0-dim


def _plan(r):
    return rulecheck.plan_samples(r, rulecheck.DEFAULT_SAMPLES, random.Random(0))


def test_unconstrained_rank_samples_zero_dim_against_other_dtypes():
    plan = _plan(mul_commutes_any_rank)
    mixed_0dim = [s for s in plan if 0 in s.ranks.values() and len(set(s.dtypes.values())) > 1
                  and any(r > 0 for r in s.ranks.values())]
    assert mixed_0dim
    pairs = {(s.dtypes[v], s.dtypes[w]) for s in mixed_0dim for v in s.ranks for w in s.ranks
             if s.ranks[v] == 0 and s.ranks[w] > 0}
    assert (torch.float32, torch.float16) in pairs  # the pair the issue was found with
    # a rank condition is respected: no 0-dim sample then
    assert all(0 not in s.ranks.values() for s in _plan(mul_commutes_dimensioned))


# ---- integer limits -----------------------------------------------------------------------------


@rule(family="activation", numerics="exact")
def relu_of_abs_is_abs(x: Tensor(dtype=SIGNED_INT)):
    """abs(INT_MIN) is INT_MIN (two's complement), which relu sends to 0: false at INT_MIN only."""
    return torch.relu(torch.abs(x)), torch.abs(x)


def test_int_min_abs_case_is_sampled_and_caught():
    res = check_rule(relu_of_abs_is_abs)
    assert not res.ok
    assert "integer limits" in res.counterexample or "special" in res.counterexample
    seen = set()
    for o in rulecheck.sample_outcomes(relu_of_abs_is_abs, 0, 40):
        if o.inputs is not None:
            x = o.inputs["x"]
            if x.dtype in (torch.int32, torch.int64) and bool((x == torch.iinfo(x.dtype).min).any()):
                seen.add(x.dtype)
    assert seen == {torch.int32, torch.int64}


@rule(family="algebra", numerics="exact")
def trunc_div_by_one(x: Tensor(dtype=("int32", "int64"))):
    return torch.div(x, 1, rounding_mode="trunc"), x.clone()


def test_int_min_left_out_where_trunc_division_would_trap():
    """`torch.div(INT_MIN, -1, rounding_mode="trunc")` raises SIGFPE: such rules never get INT_MIN."""
    for o in rulecheck.sample_outcomes(trunc_div_by_one, 0, 40):
        if o.inputs is not None:
            x = o.inputs["x"]
            assert not bool((x == torch.iinfo(x.dtype).min).any())
    assert check_rule(trunc_div_by_one).ok


# ---- signed zeros and large multithreaded shapes ----------------------------------------------------


@rule(family="concat", numerics="exact", same_shape=False)
def amax_of_cat_rows_claimed_exact(x: Tensor(rank=2, dtype=FLOATING), y: Tensor(rank=2, dtype=FLOATING)):
    return torch.cat([x, y], 0).amax(0), torch.maximum(x.amax(0), y.amax(0))


def test_signed_zero_ties_are_sampled_and_amax_of_cat_is_not_exact():
    plan = _plan(amax_of_cat_rows_claimed_exact)
    assert any(s.values == "zeros" for s in plan)
    res = check_rule(amax_of_cat_rows_claimed_exact)
    assert not res.ok and "0.0" in res.counterexample


def test_large_samples_run_multithreaded_and_restore_threads():
    plan = _plan(amax_of_cat_rows_claimed_exact)
    large = [s for s in plan if s.shape_kind == "large"]
    assert large and all(s.threads == LARGE_THREADS for s in large)
    before = torch.get_num_threads()
    seen = []
    for o in rulecheck.sample_outcomes(amax_of_cat_rows_claimed_exact, 0, 10):
        if o.sample.shape_kind == "large" and o.inputs is not None:
            seen.append(sum(t.numel() for t in o.inputs.values()))
    assert seen and max(seen) >= LARGE_NUMEL
    assert torch.get_num_threads() == before


@rule(family="linalg", numerics="exact", same_shape=False)
def outer_spelling(x: Tensor(rank=1, dtype="float32"), y: Tensor(rank=1, dtype="float32")):
    return torch.outer(x, y), x[:, None] * y[None, :]


def test_large_samples_that_would_blow_up_are_skipped_not_allocated():
    """An outer product of two long vectors would need billions of elements: sized on the meta
    device first and skipped."""
    outcomes = [o for o in rulecheck.sample_outcomes(outer_spelling, 0, 10) if o.sample.shape_kind == "large"]
    assert outcomes
    for o in outcomes:
        if o.kind == "ok":
            assert o.lhs.numel() <= rulecheck.LARGE_MAX_NUMEL
        else:
            assert o.kind == "skip"

"""Rule 1's conditioning term S: a sum whose huge terms cancel may come out differently in another
order (not a miscompile); a wrong value on well-conditioned elements, or across a discontinuity, still fails."""
from __future__ import annotations

import torch

from runners.oracle.inputs import InputSet
from runners.oracle.reference import eager_reference, judge_against


def _parts(x):
    big = torch.where(x.abs() >= 1e20, x, torch.zeros_like(x))
    return big, x - big


def _row_sum(x):  # eager's order: the huge terms cancel first, so eager (and fp64) keep the small ones
    big, small = _parts(x)
    return big.sum(-1) + small.sum(-1)


def _reordered_sum(x):  # the same sum in another order: the small terms vanish into a huge one first
    big, small = _parts(x)
    return ((small.sum(-1) + big.amax(-1)) + big.amin(-1)) * (big.amax(-1) > 0) + small.sum(-1) * (big.amax(-1) <= 0)


def _inputs():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 64, generator=g)
    x[3, 5], x[3, 9] = 1e30, -1e30  # a row whose total is the small terms' sum; eager cancels them exactly
    return InputSet("special-0", (x,))


def test_cancelling_sum_in_another_order_is_not_a_miscompile():
    s = _inputs()
    r = eager_reference(_row_sum, lambda x: {}, s)
    got = _reordered_sum(*s.inputs)
    assert not torch.equal(got[3], r.ref[3])  # the orders do differ on the cancelling row
    v = judge_against(r, got)
    assert v.ok, v.detail
    without = judge_against(r._replace(fp64p=None), got)  # the rule without S convicts it
    assert not without.ok


def test_wrong_values_on_well_conditioned_rows_still_fail():
    s = _inputs()
    r = eager_reference(_row_sum, lambda x: {}, s)
    got = _reordered_sum(*s.inputs).clone()
    got[7] *= 1.5
    v = judge_against(r, got)
    assert not v.ok and "(7,)" in v.detail


def test_a_discontinuity_is_not_excused_by_the_perturbation():
    x = torch.tensor([0.5, 1.5, 0.25, 2.0])
    s = InputSet("given", (x,))
    r = eager_reference(lambda t: t // 0.1, lambda t: {}, s)  # eager: [4, 14, 2, 20]
    got = torch.floor(x / 0.1)  # Inductor's lowering (docs/bugs.md): [5, 15, 2, 20]
    v = judge_against(r, got)
    assert not v.ok, v.detail


def test_nan_for_an_overflowing_infinity_beside_huge_finite_results_is_a_note():
    """Special inputs: finite terms near float32's max overflow to +inf and -inf in another order
    (inf - inf = NaN); beside huge finite results that NaN is not judged, elsewhere it fails."""
    from runners.oracle.judge import judge
    eager = torch.tensor([1.0, float("inf"), 2.0, 3e36] + [1.0] * 28)
    got = eager.clone()
    got[1] = float("nan")
    v = judge(eager, got, eager.double(), extreme_inputs=True)
    assert v.ok and "overflow in another order" in v.detail
    assert not judge(eager, got, eager.double(), extreme_inputs=False).ok
    small = eager.clone()
    small[3] = 3.0
    got2 = small.clone()
    got2[1] = float("nan")
    assert not judge(small, got2, small.double(), extreme_inputs=True).ok

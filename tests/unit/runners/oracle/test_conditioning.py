"""Rule 1's conditioning term S: a sum whose huge terms cancel may come out differently in another
order (not a miscompile); a wrong value on well-conditioned elements, or across a discontinuity, still fails."""
from __future__ import annotations

import dataclasses

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.inputs import InputSet
from eqsat_test.runners.oracle.reference import eager_reference, judge_against
from eqsat_test.runners.oracle.runs import overflow_of


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
    without = judge_against(r._replace(fp64p=None, fp64mc=None), got)  # the rule without S convicts it
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


def test_nan_for_an_overflowing_infinity_is_a_note_where_eager_made_the_infinity():
    """Special inputs: finite terms near float32's max overflow to +inf and -inf in another order
    (inf - inf = NaN); where eager's infinity is its own overflow (its run's record: a sum of finite
    terms) that NaN is not judged; off the special sets, or for an infinity of the inputs, it fails."""
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(15))
    x[1, :4] = torch.tensor([3e38, 3e38, 3e38, -3e38])  # +inf (exactly 6e38), NaN in an order that meets -inf
    r = eager_reference(lambda t: t.sum(-1), lambda *a: {}, InputSet("special-0", (x,)))
    assert float(r.ref[1]) == float("inf") and bool(overflow_of(r.origins[""])[1])
    got = r.ref.clone()
    got[1] = float("nan")
    v = judge_against(r, got)
    assert v.ok and "overflow in another order" in v.detail, v.detail
    assert not judge_against(r._replace(set=InputSet("given", (x,))), got).ok
    y = x.clone()
    y[1, :4] = torch.tensor([float("inf"), 1.0, 1.0, 1.0])  # an infinity of the inputs: no order makes NaN of it
    r = eager_reference(lambda t: t.sum(-1), lambda *a: {}, InputSet("special-0", (y,)))
    assert not judge_against(r, got).ok


def _count_residuals(x):  # a rewrite's x*x - x*x: exactly 0 eagerly; Triton contracts one product into an FMA
    return torch.count_nonzero(-x * x + x * x, dim=0)


def test_integer_decided_by_rounding_of_intermediates_is_a_note():
    """CUDA corpus, reduce_count_correct: a count of nonzeros of x*x - x*x is 0 eagerly and 2048 compiled
    (FMA residuals of 1e-8). The fp64 runs under Monte Carlo rounding of the intermediates reach
    compiled's count: decided by rounding, not judged. A count no rounding reaches still fails."""
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(0))
    r = eager_reference(_count_residuals, lambda x: {}, InputSet("given", (x,)))
    assert r.fp64mc is not None and int(r.ref.sum()) == 0
    fma = torch.full_like(r.ref, 64)  # every residual nonzero
    v = judge_against(r, fma)
    assert v.ok and "another rounding of the intermediates" in v.detail, v.detail
    assert judge_against(r, fma - 1).ok  # one residual exactly 0 by chance: between eager and such a run
    assert not judge_against(r._replace(fp64mc=None), fma).ok
    assert not judge_against(r, torch.full_like(r.ref, 65)).ok  # beyond every run
    assert not judge_against(r, torch.full_like(r.ref, -1)).ok


def test_floor_division_of_inputs_stays_judged_under_monte_carlo_rounding():
    """Ledger #7: floor(a / b) for eager's a // b. The floor's operands are the program's inputs,
    which the Monte Carlo runs do not move: the wrong multiples still fail."""
    x = torch.linspace(-3, 3, 601, dtype=torch.float32)

    def prog(x):
        return torch.floor_divide(x, 0.1) * 0.1

    r = eager_reference(prog, lambda x: {}, InputSet("given", (x,)))
    got = torch.floor(x / 0.1) * 0.1
    assert not torch.equal(got, r.ref)
    assert not judge_against(r, got).ok


def test_cancelling_sum_after_a_float64_round_trip_is_conditioned_too():
    """CUDA corpus, reduce_mean_spatial's variants: x.double().float() before the sum. The fp64 run
    rounds to float32 there, so a move of 1e-9 vanishes; its inputs move by SENS_CAST_ULPS eps(float32)."""
    s = _inputs()
    r = eager_reference(lambda x: _row_sum(x.double().float()), lambda x: {}, s)
    assert r.fp64_low == "float32"
    got = _reordered_sum(*s.inputs)
    assert not torch.equal(got[3], r.ref[3])
    assert judge_against(r, got).ok
    assert not judge_against(r._replace(fp64p=None, fp64mc=None), got).ok
    assert nx.sens_delta(torch.float32) > 1e-7 and nx.sens_delta(None) == nx.SENS_DELTA


def test_fp64_run_of_an_integer_input_cast_to_bfloat16_computes_in_float64():
    """CUDA corpus, norm_layer_norm_bf16 at the int64 sweep: `x.to(torch.bfloat16)` of int64 inputs left
    the fp64 run in bfloat16 (no independent reference); the cast of integers now widens to float64."""
    import torch.nn.functional as F
    x = torch.randint(-1000, 1000, (4, 64), generator=torch.Generator().manual_seed(0))
    r = eager_reference(lambda x: F.layer_norm(x.to(torch.bfloat16), (64,)), lambda x: {}, InputSet("given", (x,)))
    assert r.ref.dtype == torch.bfloat16 and r.fp64.dtype == torch.float64 and r.fp64_low is None
    assert torch.allclose(r.fp64, F.layer_norm(x.double(), (64,)))


def test_cancellation_after_a_rounded_intermediate_is_conditioned_by_monte_carlo_rounding():
    """CUDA corpus, act_gelu_erf's variants: 1 + erf(x) near x = -3.7 after a float64 round trip. The
    fp64 run computes erf in float32 too (no independent run), and another erf one ulp off moves
    1 + erf by 13%; the Monte Carlo runs move erf's result by one rounding and see it. The results
    are a few ulps of 1 (float32 knows no more of them); one off by 1e-5 (80 ulps of 1) still fails."""
    x = torch.linspace(-3.9, -3.5, 256)

    def prog(x):
        return 1.0 + torch.erf(x.double().float())

    r = eager_reference(prog, lambda x: {}, InputSet("given", (x,)))
    erf = torch.erf(x)
    got = 1.0 + torch.nextafter(erf, torch.full_like(erf, 2.0))  # another libm's erf, one ulp up
    assert not judge_against(r._replace(fp64mc=None), got).ok
    v = judge_against(r, got)
    assert v.ok, v.detail
    assert not judge_against(r, r.ref + 1e-5).ok


def test_subnormal_inputs_flushed_to_zero_are_no_miscompile():
    """CUDA corpus, act_fisher_z_correlation on the special set: atanh(r) * 1000 of a subnormal r is
    5.9e-36 eagerly and 0 from Triton, which flushes subnormals; the fp64 run on flushed inputs gives 0."""
    x = torch.randn(256, generator=torch.Generator().manual_seed(0)) * 0.1
    x[7] = 5.877e-39
    x[9] = -1e-40

    def prog(x):
        return torch.atanh(x) * 1000.0

    r = eager_reference(prog, lambda x: {}, InputSet("special-0", (x,)))
    got = prog(torch.where(x.abs() < torch.finfo(torch.float32).tiny, torch.zeros_like(x), x))
    assert not judge_against(r._replace(fp64mc=None), got).ok
    assert judge_against(r, got).ok
    wrong = r.ref.clone()
    wrong[3] = 0.0
    assert not judge_against(r, wrong).ok


def test_compiled_keeping_the_precision_of_a_cast_is_no_miscompile():
    """CUDA corpus, act_gelu_bf16's variants: 0.5 x (1 + tanh(...)) of a bfloat16 x near -3. Eager
    rounds tanh to -1 in bfloat16 (-0); Inductor keeps float32 inside (emulate_precision_casts off, as
    PyTorch documents): -0.0026, nearer the exact -0.004. The fp64 run with the cast's precision kept
    agrees with compiled; a value that agrees with neither still fails."""
    x = torch.linspace(-3.2, -2.6, 64)

    def prog(x):
        b = x.to(torch.bfloat16)
        return (0.5 * b * (1.0 + torch.tanh(0.7978845608 * (b + 0.044715 * b * b * b)))).float()

    def kept(x):  # as Inductor computes it: the bfloat16 cast of x, then float32 throughout
        b = x.to(torch.bfloat16).float()
        return 0.5 * b * (1.0 + torch.tanh(0.7978845608 * (b + 0.044715 * b * b * b)))

    r = eager_reference(prog, lambda x: {}, InputSet("given", (x,)))
    got = kept(x)
    assert not judge_against(r._replace(fp64mc=None), got).ok
    assert judge_against(r, got).ok
    assert not judge_against(r, got - 0.01).ok


def _layer_norm(x):
    return torch.nn.functional.layer_norm(x, (64,))


def test_nan_where_the_variance_is_beyond_float32_is_no_miscompile():
    """Special inputs: a row holding -1.7e38 three times has a variance of 1.3e75, which float32
    cannot hold; eager's layer_norm stays finite (0 on a CPU, 22% off fp64 elsewhere: its kernel
    overflowed inside, far from the op in float64: its run's record), compiled's var_mean is NaN there:
    not judged. A NaN in a row whose variance fits float32 still fails."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 64, generator=g)
    x[1, 3] = x[1, 7] = x[1, 11] = -1.7014e38
    r = eager_reference(_layer_norm, lambda *a: {}, InputSet("special-0", (x,)))
    assert r.fp64_beyond is not None and bool((r.fp64_beyond()[1] >= 1).all())
    got = r.ref.clone()
    got[1] = float("nan")  # compiled's overflow inside var_mean, in the row whose variance overflows
    v = judge_against(r, got)
    assert v.ok and "eager itself overflowed" in v.detail, v.detail
    got[2, 0] = float("nan")  # and one in a well-scaled row
    assert not judge_against(r, got).ok


def test_nan_where_the_exact_variance_fits_stays_a_failure():
    """A row of 1e19 with one 1.5e19 (the class of pytorch/pytorch#173793, open, high priority: large
    rows, compiled NaN, eager finite): its squares and variance fit float32, so a NaN stays a failure."""
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(1))
    x[2] = 1e19
    x[2, 0] = 1.5e19
    r = eager_reference(_layer_norm, lambda *a: {}, InputSet("special-0", (x,)))
    got = r.ref.clone()
    got[2] = float("nan")
    v = judge_against(r, got)
    assert not v.ok and "non-finite where eager and fp64 are finite" in v.detail, v.detail


def test_an_overflow_of_an_op_whose_exact_intermediates_fit_stays_judged():
    """Ledger #9: vectorized acosh(2e19) is inf compiled, 45.1 eager and in fp64, on special inputs.
    acosh is no decomposition and its value fits float32: it stays a failure."""
    x = torch.tensor([2.0, 1e10, 2e19, 1e25, 5.0] + [1.0] * 27)
    r = eager_reference(torch.acosh, lambda *a: {}, InputSet("special-0", (x,)))
    got = r.ref.clone()
    got[2:4] = float("inf")
    v = judge_against(r, got)
    assert not v.ok and "non-finite where eager and fp64 are finite" in v.detail


def test_a_reduction_whose_partial_results_reach_the_edge_of_the_range_in_another_order():
    """Rule 8, partial results: no order of a reduction's terms is specified (Triton's blocked order is
    not eager's). On a special row, a sum whose terms of one sign add up beyond float32's range in another
    order (2e38 + 2e38 first; the exact sum is the small terms'): eager's own partial sums reach the edge of
    the range, so compiled's infinity (of either sign: the terms cancel) or NaN there is an overflow in
    another order, not judged (finite.edge-of-range); a wrong value in a well-scaled row is. A product whose
    factors below 1 multiply below float32's smallest normal in another order (1e-30 · 1e-20 first, the
    whole product 1: CUDA reduce_prod) underflows in that order: compiled's 0 there is not judged
    (product.underflow-order), nor is a +inf, its factors above 1 (1e30 · 1e20) passing the range in another
    order; a value of the other sign, or ten times the product, is no order's and stays judged."""
    y = torch.randn(4, 32, generator=torch.Generator().manual_seed(3))
    y[0, :4] = torch.tensor([2e38, -2e38, 2e38, -2e38])
    r = eager_reference(lambda t: t.sum(-1), lambda *a: {}, InputSet("special-0", (y,)))
    assert overflow_of(r.origins[""]) is None  # eager itself overflowed nowhere
    for bad in (float("inf"), -float("inf"), float("nan")):
        got = r.ref.clone()
        got[0] = bad  # 2e38 + 2e38 first; -2e38 - 2e38 first; both
        v = judge_against(r, got)
        assert v.ok and v.totals() == {"finite.non-finite": 1, "finite.edge-of-range": 1}, v.detail
    got[3] = float("inf")
    v = judge_against(r, got)
    assert not v.ok and "(3,)" in v.detail, v.detail
    assert bool(r.fp64_beyond()[0] >= 1)

    x = torch.rand(4, 32, generator=torch.Generator().manual_seed(2)) + 0.5
    x[1, :4] = torch.tensor([1e30, 1e-30, 1e20, 1e-20])
    r = eager_reference(lambda t: t.prod(-1), lambda *a: {}, InputSet("special-0", (x,)))
    got = r.ref.clone()
    assert 0.1 < float(r.ref[1].abs()) < 1e10  # eager's order: 1e30 * 1e-30 first
    got[1] = 0.0  # 1e-30 * 1e-20 first: flushed on the way
    v = judge_against(r, got)
    assert v.ok and v.totals() == {"finite.bound": 1, "product.underflow-order": 1}, v.detail
    for wrong in (-r.ref[1], 10 * r.ref[1]):
        got[1] = wrong
        v = judge_against(r, got)
        assert not v.ok and v.leaf == "" and "(1,)" in v.detail, v.detail
    assert bool(r.fp64_beyond()[1] >= 1) and not bool((r.fp64_beyond()[[0, 2, 3]] >= 1).any())
    got[1] = float("inf")  # 1e30 * 1e20 first
    v = judge_against(r, got)
    assert v.ok and v.totals() == {"finite.non-finite": 1, "finite.edge-of-range": 1}, v.detail
    got[1] = -float("inf")  # the product is positive in every order
    assert not judge_against(r, got).ok


def test_a_variance_whose_squared_deviations_sum_beyond_the_range_is_not_judged():
    """The int64 sweep of a bfloat16 layer_norm on CUDA: a row holding +-2^63 twice each has
    squared deviations summing to 2^128, past float32's maximum, though the variance fits; float32
    eager overflows there as compiled does. A row with +inf (ledger #14: compiled inf, eager NaN)
    keeps its NaN in fp64 and stays judged."""
    x = torch.randn(3, 16, generator=torch.Generator().manual_seed(4))
    x[0, :4] = torch.tensor([2.0 ** 63, 2.0 ** 63, -2.0 ** 63, -2.0 ** 63])
    x[2, 5] = float("inf")
    prog = lambda t: torch.nn.functional.layer_norm(t, (16,))  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (x,)))
    got = r.ref.clone()
    assert bool((got[0] == 0).all())  # float32 eager: the bias, rsqrt of an infinite variance
    got[0] = 1.0  # compiled's own overflow, elsewhere in the row's arithmetic
    v = judge_against(r, got)
    assert v.ok and "eager itself overflowed" in v.detail, v.detail
    var = eager_reference(lambda t: t.var(-1), lambda *a: {}, InputSet("special-0", (x,)))
    got = var.ref.clone()
    got[2] = float("inf")
    assert not judge_against(var, got).ok


def test_a_float64_program_on_a_gpu_is_judged_beside_the_cpu(monkeypatch):
    """A program in float64 throughout has no higher precision to check it against: on a GPU its fp64
    run is the CPU's (another libm), not eager again. CUDA eager's float64 hardswish is 6.5e-8 off
    (a CUDA campaign); here a device whose float64 op is 1e-7 off and a compiled value that agrees
    with the CPU: no miscompile. A compiled value 1% off stays one."""
    import eqsat_test.runners.oracle.reference as ref_mod
    monkeypatch.setattr(ref_mod, "_on_gpu", lambda inputs: True)
    x = torch.randn(64, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    device_op = lambda t: t * (1 + 1e-7)  # noqa: E731 - the device's imprecise float64 op
    cpu_op = lambda t: t * 1.0  # noqa: E731
    alone = eager_reference(device_op, lambda *a: {}, InputSet("given", (x,)))
    assert not judge_against(alone, x * 1.0).ok  # eager is the only reference: rule 6
    r = eager_reference(device_op, lambda *a: {}, InputSet("given", (x,)), cpu_forward=cpu_op)
    assert judge_against(r, x * 1.0).ok
    assert not judge_against(r, x * 1.01).ok


def _bn_conv_bn(x, w_pw, w_bn):
    """conv_depthwise_separable's variant (a CUDA campaign): a batch_norm whose weight is cast
    to float32 inside, so that its fp64 run mixes float64 data with a float32 weight."""
    c = x.shape[1]
    y = torch.conv2d(x, w_pw)
    wt = torch.neg(w_bn).to(torch.float64).to(torch.float32)
    return torch.relu(torch.nn.functional.batch_norm(y, torch.zeros(c, dtype=x.dtype), torch.ones(c, dtype=x.dtype),
                                                     wt, None, False, 0.1, 1e-5))


def test_a_program_that_mixes_dtypes_in_float64_has_an_fp64_run_and_its_conv_sums_reach_the_edge():
    """The casts keep their precision in the fp64 run (it does not raise); the 1x1 conv's cancelling terms
    near float32's max overflow in another order of its partial sums: compiled's 0 there, after the batch
    norm and relu, is what an overflow in another order gives (bound.edge-of-range); a wrong value in a
    well-scaled element is not."""
    g = torch.Generator().manual_seed(6)
    x = torch.randn(2, 8, 4, 4, generator=g)
    w_pw = torch.randn(8, 8, 1, 1, generator=g)
    w_bn = -torch.rand(8, generator=g) - 0.5
    x[0, :4, 1, 1] = torch.tensor([3e38, -3e38, 3e38, -3e38])  # cancelling terms of the 1x1 conv's sum
    w_pw[:, :4] = 1.0
    r = eager_reference(_bn_conv_bn, lambda *a: {}, InputSet("special-0", (x, w_pw, w_bn)))
    assert r.fp64 is not None  # the casts kept their precision (KeptPrecision), the run did not raise
    got = r.ref.clone()
    got[0, :, 1, 1] = 0.0  # the conv's partial sums overflow in another order
    v = judge_against(r, got)
    assert v.ok and v.totals().get("bound.edge-of-range", 0) >= 1, v.detail
    assert "bound.beyond-range" not in v.totals()  # eager itself overflowed nowhere
    got[1, 0] += 1.0  # a well-scaled element
    assert not judge_against(r, got).ok


def test_a_sum_whose_terms_cancel_is_judged_by_its_terms_magnitude():
    """The int64 sweep of act_ssm_zoh_discretize on CUDA: int64 extremes times small
    weights, summed over a sequence, cancel to ~1e14 from terms of ~1e15; another order of the partial
    sums moves the result by a few ulps of the terms' magnitude, far more than ulps of the result. The
    Monte Carlo runs move each sum by eps·sqrt(n)·(its terms' magnitude): such a value passes, an error
    of 1e-5 of the magnitude does not, and a count of whole numbers stays exact."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-2 ** 62, 2 ** 62, (8, 32, 4), generator=g)
    db = torch.rand(4, generator=g) * 1e-4
    prog = lambda x, db: (x.unsqueeze(-1) * db).sum(1)  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (x, db)))
    mag = (x.unsqueeze(-1).double().abs() * db.double()).sum(1)
    noise = (mag * 3e-8 * torch.randn(r.ref.shape, generator=g, dtype=torch.float64)).float()
    v = judge_against(r, r.ref + noise)  # a few roundings of the terms' magnitude: another order
    assert v.ok, v.detail
    got = r.ref.clone()
    got[0, 0, 0] += float(mag[0, 0, 0]) * 1e-5
    assert not judge_against(r, got).ok

    ones = (torch.rand(64, 4096, generator=g) < 0.5).float()
    r = eager_reference(lambda t: t.sum(-1), lambda *a: {}, InputSet("random-0", (ones,)))
    got = r.ref.clone()
    got[3] += 1.0  # a count off by one
    assert not judge_against(r, got).ok


def test_a_float64_leaf_has_no_independent_judge_of_overflow(monkeypatch):
    """The float64 sweeps on CUDA: on special rows near 1.8e308, eager NaN (inf - inf in
    its order) and compiled -inf (another order). The fp64 run of a float64 program, the CPU's on a
    GPU, has float64's range, so it cannot say whose NaN/inf is right there: a note, not a candidate.
    Off the special sets the NaN is float64's own overflow (rule 8: not judged either), and a NaN/inf of
    another kind where the NaN is the inputs' own (inf - inf of input infinities) stays a failure.
    (Limit: a special row holding an infinity itself, whose NaN no order avoids, is not judged either
    at float64.)"""
    import eqsat_test.runners.oracle.reference as ref_mod
    monkeypatch.setattr(ref_mod, "_on_gpu", lambda inputs: True)  # the fp64 run is the CPU's
    x = torch.randn(8, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    x[2, :4] = torch.tensor([1.5e308, 1.5e308, -1.5e308, -1.5e308], dtype=torch.float64)
    prog = lambda t: t[:, :2].sum(-1) + t[:, 2:].sum(-1)  # noqa: E731 - inf + -inf on row 2
    cpu = lambda t: prog(t) * (1 + 2 ** -52)  # noqa: E731 - another libm: an ulp off
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (x,)), cpu_forward=cpu)
    assert bool(torch.isnan(r.ref[2])) and bool(torch.isnan(r.fp64[2]))
    got = r.ref.clone()
    got[2] = -float("inf")  # (1.5e308 - 1.5e308) + ... in another order, then an overflow
    v = judge_against(r, got)
    assert v.ok and "no wider than float64" in v.detail, v.detail
    r = eager_reference(prog, lambda *a: {}, InputSet("random-0", (x,)), cpu_forward=cpu)
    v = judge_against(r, got)
    assert v.ok and "NaN depends on an intermediate beyond the range of float64" in v.detail, v.detail
    y = x.clone()
    y[2, :4] = torch.tensor([float("inf"), 1.0, -float("inf"), 1.0], dtype=torch.float64)
    r = eager_reference(prog, lambda *a: {}, InputSet("random-0", (y,)), cpu_forward=cpu)
    assert bool(torch.isnan(r.fp64[2]))
    assert not judge_against(r, got).ok


def test_values_gathered_by_the_order_of_tied_sort_keys_are_not_judged():
    """index_take_along_dim on CUDA: tokens gathered by argsort(scores, descending) on a
    special set whose scores repeat (ties): compiled's sort breaks ties in another order, so other
    tokens land there. Where two stable tie orders give different outputs, an element depends on the
    order of tied keys and is not judged; a wrong value elsewhere, and a NaN sorted as the smallest
    (torch sorts NaN as the largest value), stay failures."""
    g = torch.Generator().manual_seed(8)
    scores = torch.randn(4, 64, generator=g)
    scores[:, :16] = 1.0  # sixteen tied keys per row
    tokens = torch.randn(4, 64, generator=g)
    prog = lambda s, t: torch.take_along_dim(t, torch.argsort(s, dim=1, descending=True), dim=1)  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (scores, tokens)))
    idx = torch.sort(scores.flip(1), dim=1, descending=True, stable=True)[1]
    got = torch.take_along_dim(tokens, 63 - idx, dim=1)  # ties in reverse order
    assert not torch.equal(got, r.ref)
    v = judge_against(r, got)
    assert v.ok and "tied keys" in v.detail, v.detail
    bad = got.clone()
    bad[2, 40] += 1.0  # no tie there
    assert not judge_against(r, bad).ok
    scores[1, 20] = float("nan")
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (scores, tokens)))
    s2 = torch.where(scores.isnan(), torch.tensor(-float("inf")), scores)
    got = torch.take_along_dim(tokens, torch.argsort(s2, dim=1, descending=True, stable=True), dim=1)
    assert not judge_against(r, got).ok  # NaN sorted last


def test_the_middle_of_three_tied_keys_is_not_judged_either():
    """index_take_along_dim on CUDA: a special row holds three tied scores (three 5.9e-39, or
    -0, 0, 0); index order and reverse index order put the same token in the middle, while compiled's
    sort put another there (eager 0.0108546, compiled -0.406908). Every rotation of each group of ties
    is run, so every position of a group is seen to depend on the order; a wrong token outside the ties
    still fails."""
    g = torch.Generator().manual_seed(8)
    scores = torch.randn(4, 32, generator=g)
    scores[:, 5:8] = torch.tensor([-0.0, 0.0, 0.0])  # three tied keys per row (-0 == 0)
    tokens = torch.randn(4, 32, 8, generator=g)
    prog = lambda s, t: torch.take_along_dim(t, torch.argsort(s, dim=1, descending=True).unsqueeze(-1), dim=1)  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (scores, tokens)))
    order = torch.argsort(scores, dim=1, descending=True, stable=True)
    mid = (order == 6).nonzero()[:, 1]  # where index order puts the middle member of the group
    swapped = order.clone()
    rows = torch.arange(4)
    swapped[rows, mid], swapped[rows, mid + 1] = order[rows, mid + 1], order[rows, mid]  # 5, 7, 6
    got = torch.take_along_dim(tokens, swapped.unsqueeze(-1), dim=1)
    assert not torch.equal(got, r.ref)
    v = judge_against(r, got)
    assert v.ok and "tied keys" in v.detail, v.detail
    bad = got.clone()
    bad[1, 0, 3] += 1.0  # the largest score: no tie there
    assert not judge_against(r, bad).ok


def _cast_read_twice(x):
    """conv_conv3d_video_block's variant (CUDA campaigns), shortened: a float32 cast
    of a float64 value read twice, -a + a: 0 eagerly."""
    a = (x.neg() * x).double().pow(2).to(torch.float32)
    b = a.neg().neg().double().to(torch.float32)
    return torch.add(-b, a)


def test_a_cast_read_once_rounded_and_once_not_is_no_miscompile():
    """Inductor keeps a cast's precision unless `emulate_precision_casts` is set (documented): one read
    of `a` may be the float64 value, the other the float32 one, so compiled gives a's rounding where
    eager gives 0 (0.018 on CUDA, a's of ~1e6). The walk runs move an add by eps·(|a| + |b|), counted at
    the element; float32 values past 2^24 count as rounded (they are whole numbers either way). An error
    of 1e-4 of the operands stays a failure."""
    x = torch.randn(4096, generator=torch.Generator().manual_seed(9)) * 30
    r = eager_reference(_cast_read_twice, lambda *a: {}, InputSet("random-0", (x,)))
    assert bool((r.ref == 0).all())
    p = (x.neg() * x).double().pow(2)
    got = (p - p.float().double()).float()  # one read unrounded
    assert float(got.abs().max()) > 1.0
    v = judge_against(r, got)
    assert v.ok, v.detail
    bad = got.clone()
    bad[7] += float(p[7]) * 1e-4
    assert not judge_against(r, bad).ok


def test_a_max_over_casts_read_twice_is_judged_by_the_walk_that_halves():
    """conv_conv3d_video_block's variant on CUDA: the cast read twice, -a + a, then a max-pool
    over windows of four such adds, all 0 eagerly. Compiled's max is the largest of four residuals; the
    walk's two runs move it by the largest positive move in one and a smaller one in the other, which do
    not mirror, so the pair counted nothing (425 elements failed, up to 0.58 at a's of ~1e7). A pair
    whose changes halve when its moves halve is the roundings' own (a max over ties is positively
    homogeneous): it counts. A value between the two sides of a step its rounding crosses (no such
    scaling: the jump stays whole) stays a failure, and so does an error of 1e-4 of the operands."""
    x = torch.randn(4096, generator=torch.Generator().manual_seed(9)) * 30
    pool = lambda t: _cast_read_twice(t).reshape(-1, 4).amax(-1)  # noqa: E731
    r = eager_reference(pool, lambda *a: {}, InputSet("random-0", (x,)))
    assert bool((r.ref == 0).all())
    p = (x.neg() * x).double().pow(2)
    got = (p - p.float().double()).float().reshape(-1, 4).amax(-1)  # one read unrounded
    assert float(got.abs().max()) > 1.0
    v = judge_against(r, got)
    assert v.ok, v.detail
    bad = got.clone()
    bad[7] += float(p.reshape(-1, 4)[7].amax()) * 1e-4
    assert not judge_against(r, bad).ok
    step = lambda t: (_cast_read_twice(t).reshape(-1, 4).amax(-1) > 0).float() * 1000  # noqa: E731
    r = eager_reference(step, lambda *a: {}, InputSet("random-0", (x,)))
    runs = r.fp64mc()
    walk_only = r._replace(fp64mc=lambda: dataclasses.replace(runs, noise=()))  # the walk's own judgement
    assert float((runs.walk.plus - r.fp64).abs().max()) == 1000.0  # the walk's rounding crosses the step
    half = torch.zeros(1024)
    half[3] = 500.0  # between the two sides of the step
    assert not judge_against(walk_only, half).ok


def test_a_mark_beyond_the_range_survives_a_comparison():
    """conv_depthwise_separable and conv_resnext_grouped_block on CUDA: relu rewritten as
    `where(y > 0, y, 0)` after a 1x1 conv whose terms of one sign pass float32's range; compiled's sum
    overflows in another order (inf - inf: NaN), and NaN > 0 picks the 0 (eager 2.74e36, compiled 0).
    The run that marks values beyond the range with NaN lost the mark the same way (NaN > 0: 0): the
    marks are a taint carried beside the values, so the element is marked; so are eager's own partial
    sums at the edge of the range (the eager run's record), which the comparison carries on as `after`:
    compiled's 0 and the comparison's False are an overflow in another order, not judged
    (bound.edge-of-range, exact.edge-of-range). A wrong value at an element of a well-scaled row fails."""
    y = torch.randn(4, 32, generator=torch.Generator().manual_seed(11))
    y[1, :3] = torch.tensor([2e38, -2e38, 2e38])  # exact sum 2e38 + the rest; 2e38 + 2e38 first overflows
    prog = lambda t: (lambda s: torch.where(s > 0, s, 0.0))(t.sum(-1))  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (y,)))
    assert 1e38 < float(r.ref[1]) < 3e38
    got = r.ref.clone()
    got[1] = 0.0  # NaN in compiled's order, then NaN > 0 is False
    v = judge_against(r, got)
    assert v.ok and v.totals() == {"finite.bound": 1, "bound.edge-of-range": 1}, v.detail
    assert bool(r.fp64_beyond()[1] >= 1)  # the mark survived the comparison
    got[2] = got[2] + 1.0
    v = judge_against(r, got)
    assert not v.ok and "(2,)" in v.detail, v.detail
    # a bool output: the comparison itself
    r = eager_reference(lambda t: t.sum(-1) > 0, lambda *a: {}, InputSet("special-0", (y,)))
    got = r.ref.clone()
    got[1] = False
    v = judge_against(r, got)
    assert v.ok and v.totals() == {"exact.differs": 1, "exact.edge-of-range": 1}, v.detail
    assert bool(r.fp64_beyond()[1] >= 1)
    got[3] = ~got[3]
    assert not judge_against(r, got).ok


def test_an_infinity_from_the_inputs_is_no_overflow():
    """An input infinity is a true one, as in the fp64 run: an element computed from it (exp(2 · -inf)
    is 0) stays judged; the run that marks values beyond the range marked every infinity as such
    before, so any value passed there."""
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(12))
    x[2, 5] = -float("inf")
    r = eager_reference(lambda t: torch.exp(t * 2), lambda *a: {}, InputSet("special-0", (x,)))
    assert float(r.ref[2, 5]) == 0.0
    got = r.ref.clone()
    got[2, 5] = float("nan")
    assert not judge_against(r, got).ok


def _blocked_cumprod(x, block):  # a scan in blocks, as Triton's: each block's products, then the carry
    out, carry = [], torch.ones(x.shape[:-1])
    for s in range(0, x.shape[-1], block):
        out.append(carry[..., None] * torch.cumprod(x[..., s:s + block], -1))
        carry = out[-1][..., -1]
    return torch.cat(out, -1)


def test_a_cumprod_whose_later_run_overflows_is_not_judged_on_any_input_set():
    """reduce_cumprod_discount's uint8 sweep on CUDA (a random set): 0.99 · x of uint8 rows
    cumprod'ed; a zero early in a row keeps eager's products 0, while Triton's scan multiplies a block
    of later factors (up to 252^k) first, which overflows, and 0 · inf is NaN (748 elements). A scan's
    partial products are those of runs of consecutive factors: where one passes the edge of the range
    (on every input set, not only the special ones), compiled's NaN where eager and fp64 are 0 is an
    overflow in another order, not judged (finite.edge-of-range); a NaN before any run reaches the edge
    (factors on both sides of the zero never meet) stays a failure."""
    x = torch.randint(0, 256, (16, 129), generator=torch.Generator().manual_seed(13)).to(torch.uint8)
    x[:, 3] = 0
    prog = lambda t: torch.cumprod(0.99 * t, dim=1)  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("sweep-dtype=uint8-random", (x,)))
    got = _blocked_cumprod(0.99 * x, 32)
    assert bool((torch.isnan(got) & (r.ref == 0)).any())
    v = judge_against(r, got)
    assert v.ok and v.totals()["finite.edge-of-range"] == int(torch.isnan(got).sum()), v.detail
    marks = r.fp64_beyond()
    assert bool((marks >= 1)[torch.isnan(got)].all())
    got[5, 10] = float("nan")  # factors 4..10 multiply to at most 252^7: far from the edge
    v = judge_against(r, got)
    assert not v.ok and "(5, 10)" in v.detail, v.detail


def test_nan_where_fp64_is_infinite_is_judged_by_the_finite_terms_partial_products():
    """reduce_prod (dynamic sweep) and reduce_cumprod_discount (special) on CUDA: a row
    holding -inf, and factors whose partial products underflow below float32's smallest normal in some
    order (1e-20 · -1e-20): that order's 0 · -inf is NaN, eager's and fp64's -inf. Not judged; a NaN for
    a row holding -inf whose finite factors stay in range in every order still fails, as does an inf
    where fp64 is NaN (ledger #14's kind). Subnormal factors (5.9e-39, Triton flushes them to 0) give
    the NaN in the fp64 run with subnormals flushed: not judged either. Eager's own record shows both
    (product.underflow-order: the finite factors' partial products below float32's smallest normal in
    some order, an infinity among the factors), before the fp64 runs' marks (kind.nan-beyond-range) or the
    run with subnormals flushed (kind.other-rounding) are made."""
    x = torch.rand(4, 16, generator=torch.Generator().manual_seed(14)) + 0.5
    x[1, :4] = torch.tensor([-float("inf"), 1e-20, -1e-20, 1.7e38])
    x[2, 0] = -float("inf")
    x[3, :2] = torch.tensor([float("inf"), 0.0])
    e = None
    for small in ((1e-20, -1e-20), (5.9e-39, -5.9e-39)):  # normal; subnormal
        x[1, 1:3] = torch.tensor(small)
        r = eager_reference(lambda t: t.prod(-1), lambda *a: {}, InputSet("special-0", (x,)))
        assert float(r.fp64[1]) == float("inf") and float(r.fp64[2]) == -float("inf")
        if e is None:
            e = r.ref.clone()
            e[1] = float("inf")  # CUDA eager: the infinity met before the small factors went to 0
        r = r._replace(ref=e, ref2=e)
        got = e.clone()
        got[1] = float("nan")
        v = judge_against(r, got)
        assert v.ok and v.totals() == {"kind.special": 1, "product.underflow-order": 1}, v.detail
        got[2] = float("nan")
        assert not judge_against(r, got).ok
        got = e.clone()
        got[3] = float("inf")  # inf · 0 is NaN in every order
        assert not judge_against(r, got).ok


def test_the_fp64_run_promotes_integers_to_float64():
    """reduce_cumprod_discount's int8 sweep on CUDA: `0.99 * x` of an int8 x is float32
    eagerly, and was float32 in the fp64 run too (only floating inputs were widened), so the fp64 run
    shared eager's overflow: the row's partial products overflow float32 (CUDA's scan accumulates in
    float32) before an exact 0 factor, eager and fp64 NaN (inf · 0), and the compiled exact 0 failed.
    Here (0.99 x)^30 · z, z = 0: the fp64 run computes with float64 as the default dtype, finite there,
    so eager's NaN is an overflow (rule 2) and 0 passes."""
    x = torch.full((2, 8), 100, dtype=torch.int8)
    z = torch.zeros(2, 8, dtype=torch.int8)
    r = eager_reference(lambda t, z: (0.99 * t) ** 30 * z, lambda *a: {}, InputSet("random-0", (x, z)))
    assert r.fp64.dtype == torch.float64 and bool(torch.isnan(r.ref).all())
    assert bool((r.fp64 == 0).all())
    v = judge_against(r, torch.zeros(2, 8))
    assert v.ok, v.detail
    assert torch.get_default_dtype() == torch.float32  # restored


def test_a_nan_of_the_fp64_runs_own_overflow_is_no_judge():
    """The same sweep's rows overflow float64 too when the exact 0 comes late (100^160): eager and fp64
    NaN, the exact value (and another order's) 0. The decomposed program's run under BeyondRange(float64)
    marks the NaN as float64's own overflow: not judged (rule 8). A NaN of an input NaN still is."""
    x = torch.full((2, 200), 100, dtype=torch.int8)
    x[:, 180] = 0
    r = eager_reference(lambda t: torch.cumprod(0.99 * t, 1), lambda *a: {}, InputSet("random-0", (x,)))
    assert bool(torch.isnan(r.fp64[:, 180:]).all())
    got = r.ref.clone()
    got[:, 180:] = 0.0
    v = judge_against(r, got)
    assert v.ok and "own overflow" in v.detail, v.detail
    y = torch.rand(2, 200, generator=torch.Generator().manual_seed(3)) + 0.5
    y[:, 180] = float("nan")
    r = eager_reference(lambda t: torch.cumprod(0.99 * t, 1), lambda *a: {}, InputSet("special-0", (y,)))
    got = r.ref.clone()
    got[:, 180:] = 0.0
    assert not judge_against(r, got).ok


def test_a_nan_or_inf_that_another_rounding_gives_is_not_judged():
    """reduce_cumprod_discount's size-65 special set on CUDA: an infinite discount times a
    reverse cumsum whose +-1e30 terms cancel to exactly 0 in eager's order and in float64's (the small
    terms absorbed): eager and fp64 NaN; an order that keeps the small terms gives an infinity. The
    walk runs (the partial sums moved by their roundings) give the infinities as well: not judged. An
    infinity of the wrong sign where every run agrees with fp64 still fails."""
    d = torch.tensor([float("inf"), float("inf"), 2.0])
    x = torch.tensor([[1e30, 0.5, 0.25, -1e30], [1e30, 0.5, 0.25, -1e30], [1.0, 0.5, 0.25, 2.0]])
    prog = lambda d, x: d * x.sum(-1)  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (d, x)))
    assert bool(torch.isnan(r.ref[:2]).all()) and bool(torch.isnan(r.fp64[:2]).all())
    runs = r.fp64mc()
    kinds = {float(m[k]) for m in runs.all() if m is not None for k in (0, 1) if not bool(torch.isfinite(m[k]))}
    assert kinds & {float("inf"), -float("inf")}, kinds
    got = r.ref.clone()
    got[0] = next(iter(kinds & {float("inf"), -float("inf")}))  # another order's infinity
    v = judge_against(r, got)
    assert v.ok and "another rounding" in v.detail, v.detail
    got[2] = -float("inf")  # 2 · 3.75: finite in every order
    assert not judge_against(r, got).ok


def test_a_float64_program_on_a_gpu_has_one_fp64_run_the_cpus(monkeypatch):
    """A float64 program on a GPU: its fp64 run is the CPU's (rule 6's independent libm), made once; the
    device's own float64 run was made first and thrown away before. Where the CPU run fails,
    the device's is the reference."""
    import eqsat_test.runners.oracle.reference as ref_mod
    monkeypatch.setattr(ref_mod, "_on_gpu", lambda inputs: True)
    x = torch.randn(16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    calls = []
    prog = lambda t: (calls.append(1), t.sin())[1]  # noqa: E731
    cpu = lambda t: t.sin() * (1 + 2 ** -52)  # noqa: E731 - another libm
    r = eager_reference(prog, lambda *a: {}, InputSet("random-0", (x,)), cpu_forward=cpu)
    assert len(calls) == 2 and torch.equal(r.fp64, x.sin() * (1 + 2 ** -52))  # eager twice, no device fp64 run

    def broken(t):
        raise RuntimeError("no CPU kernel")
    calls.clear()
    r = eager_reference(prog, lambda *a: {}, InputSet("random-0", (x,)), cpu_forward=broken)
    assert len(calls) == 3 and torch.equal(r.fp64, x.sin())


def test_a_nan_grid_coordinate_converted_to_an_index_is_not_judged():
    """index_grid_sample_stn's special set (CPU): a NaN in the image makes the predicted affine
    theta NaN for that sample, so its whole sampling grid is NaN; eager's grid_sample gives NaN, the compiled
    decomposition floors the coordinates into int64 indices (NaN to an integer: undefined in C++) and masks
    them to 0. Those elements are not judged; the other sample's stay judged (a planted error fails)."""
    import torch.nn.functional as F
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(0))
    theta = torch.tensor([[1.0, 0.1, 0.0], [0.0, 1.0, 0.1]]).repeat(2, 1, 1)
    theta[1, 0, 0] = float("nan")
    prog = lambda x, t: F.grid_sample(x, F.affine_grid(t, list(x.shape), align_corners=False),  # noqa: E731
                                      align_corners=False)
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (x, theta)))
    assert bool(torch.isnan(r.ref[1]).all()) and not bool(torch.isnan(r.ref[0]).any())
    got = r.ref.clone()
    got[1] = 0.0  # the decomposition's masked indices
    v = judge_against(r, got)
    assert v.ok and "conversion of NaN/inf to an integer" in v.detail, v.detail
    got[0, 0, 2, 2] += 1.0
    assert not judge_against(r, got).ok


def test_a_float_within_rounding_of_zero_tested_against_zero_is_not_judged():
    """linspace(-3, 3, 15).to(bool): the middle value is 0 exactly, eager's -3e-8 and fp64's 2e-16 are rounding
    (Inductor's linspace computes exactly 0): compiled's False there is no miscompile, nor a count of nonzeros
    one less, nor x == 0 flipped there (x < 0 is, as eager's and fp64's signs differ). The Monte Carlo runs read a
    value within rounding of 0 as 0 and across it where a test against 0 reads it; a flip of a value far from 0
    still fails."""
    progs = [lambda t: torch.linspace(-3.0, 3.0, 15).to(torch.bool),
             lambda t: torch.count_nonzero(torch.linspace(-3.0, 3.0, 15) * t),
             lambda t: torch.linspace(-3.0, 3.0, 15) * t < 0,
             lambda t: torch.linspace(-3.0, 3.0, 15) * t == 0]
    for k, prog in enumerate(progs):
        r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (torch.ones(15),)))
        got = r.ref.clone()
        if got.dim():
            got[7] = ~got[7]
        else:
            got -= 1
        v = judge_against(r, got)
        assert v.ok and v.totals().get("exact.between-runs") == 1, (k, v.detail)
        if got.dim():
            got[6] = ~got[6]  # -0.43: far from the step
            v = judge_against(r, got)
            assert not v.ok and "first at (6,)" in v.detail, (k, v.detail)

"""Tests of runners/oracle/judge.py's per-element rule: the wrong outputs that passed an allclose oracle (cases 1-8) now fail; its false alarms now pass."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from eqsat_test.runners.oracle.inputs import input_sets
from eqsat_test.runners.oracle.judge import MATCH, MISMATCH, NONDETERMINISTIC, judge, to_fp64, tolerance
from eqsat_test.runners.oracle.runs import EagerOrigin, EdgeOfRange, edge_of, overflow_of

REPO = Path(__file__).resolve().parents[4]


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def runs(fn, *args):
    """(eager, fp64): fn on the inputs and on the inputs in float64."""
    with torch.no_grad():
        return fn(*args), fn(*[a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                               for a in args])


# ---------------------------------------------------------------------------------------------
# case 1: small magnitudes (the old first test was allclose(1e-4), fp64 never consulted)


@pytest.mark.parametrize("wrong", [lambda e: -e, torch.zeros_like, lambda e: 2 * e])
def test_small_magnitude_outputs_wrong_fail(wrong):
    x = torch.randn(1000, generator=gen(0), dtype=torch.float64) * 1e-5
    eager, fp64 = x.float(), x
    v = judge(eager, wrong(eager), fp64)
    assert (v.ok, v.kind) == (False, MISMATCH), v.detail
    assert judge(eager, eager.clone(), fp64).ok


def test_a_failing_verdict_names_the_elements_it_charged():
    """Verdict.failing: the flat indices the oracle charged (the referee judges these), float and exact alike."""
    x = torch.randn(6, 5, generator=gen(3), dtype=torch.float64)
    eager, fp64 = x.float(), x
    wrong = eager.clone()
    wrong[1, 2], wrong[4, 0] = 7.0, -7.0
    v = judge(eager, wrong, fp64)
    assert not v.ok and v.failing == (7, 20), v
    ints = torch.arange(10)
    assert judge(ints, ints.flip(0)).failing == tuple(range(10))
    assert judge(eager, eager.clone(), fp64).failing == ()


def test_softmax_over_a_million_classes_uniform_fails():
    logits = torch.randn(2**20, generator=gen(1))
    eager, fp64 = runs(lambda t: t.softmax(-1), logits)
    v = judge(eager, torch.full_like(eager, 1 / 2**20), fp64)
    assert not v.ok and "exceed the fp64 bound" in v.detail


# ---------------------------------------------------------------------------------------------
# case 2: rows holding 1e30 on the special input set must not set the bound of the normal rows


@pytest.mark.parametrize("program", ["sum", "mean", "matmul"])
def test_special_rows_do_not_excuse_wrong_normal_rows(program):
    w = torch.randn(16, 8, generator=gen(99))
    fns = {"sum": lambda x, w: x.sum(-1), "mean": lambda x, w: x.mean(-1), "matmul": lambda x, w: x @ w}
    judged = 0
    for seed in range(20):
        x = input_sets([torch.randn(32, 16)], seed=seed, kinds=("special",))[0].inputs[0]
        eager, fp64 = runs(fns[program], x, w)
        normal = (x.abs() < 1e20).all(-1)  # rows without inf, NaN, 1e30 or max/2
        if not bool(normal.any()):
            continue
        wrong = eager.clone()
        wrong[normal] *= 1.5
        v = judge(eager, wrong, fp64, extreme_inputs=True)
        assert not v.ok, (seed, v.detail)
        assert judge(eager, eager.clone(), fp64, extreme_inputs=True).ok
        judged += 1
    assert judged >= 15


# ---------------------------------------------------------------------------------------------
# case 3: one wrong element is not averaged away


def test_one_wrong_element_of_a_million_fails():
    x = torch.randn(1024, 1024, generator=gen(2), dtype=torch.float64)
    eager, fp64 = runs(lambda t: t.exp() - 1, x.float())
    wrong = eager.clone()
    wrong[500, 500] *= 1.01
    v = judge(eager, wrong, fp64)
    assert (v.ok, v.leaf) == (False, "") and "1 exceed" in v.detail and "(500, 500)" in v.detail
    # the detail shows eager, compiled and fp64 at that element
    for value in (eager[500, 500], wrong[500, 500], fp64[500, 500]):
        assert f"{float(value):.6g}" in v.detail


# ---------------------------------------------------------------------------------------------
# cases 4 and 5: a cancelling or ill-conditioned element widens neither its leaf nor its row


def test_one_cancelling_row_does_not_switch_off_the_leaf():
    rows = torch.randn(64, 4096, generator=gen(3))
    rows[0] -= rows[0].mean()  # row 0 sums to ~0: eager is far off fp64 relative to its value
    eager, fp64 = runs(lambda t: t.sum(-1), rows)
    wrong = eager.clone()
    wrong[5] *= 1.01
    assert not judge(eager, wrong, fp64).ok
    # the cancelling row itself may be off by a few times eager's own error there
    other = eager.clone()
    other[0] = fp64[0] + 3 * (eager[0].double() - fp64[0])
    assert judge(eager, other, fp64).ok


def test_ill_conditioned_element_does_not_widen_its_neighbours():
    x = torch.randn(256, generator=gen(4), dtype=torch.float64)
    eager = x.float()
    eager[0] = (eager[0] + 1e4) - 1e4  # ~5e-4 off: the ill-conditioned element
    fp64 = x.clone()
    ill = eager.clone()
    ill[0] = fp64[0] + 10 * (eager[0].double() - fp64[0])
    assert judge(eager, ill, fp64).ok  # 10x eager's error where eager is itself far off
    wrong = eager.clone()
    wrong[7] *= 1.001  # an ordinary neighbour, 1e-3 off
    v = judge(eager, wrong, fp64)
    assert not v.ok and "(7,)" in v.detail


# ---------------------------------------------------------------------------------------------
# case 6: special values are judged by kind, not masked


@pytest.mark.parametrize("value", [-math.inf, math.nan, -123.0])
def test_eager_and_fp64_infinity_must_be_kept(value):
    eager = torch.tensor([1.0, math.inf, 2.0])
    got = eager.clone()
    got[1] = value
    v = judge(eager, got, eager.double(), extreme_inputs=True)
    assert not v.ok and "NaN/Inf positions differ" in v.detail and "(1,)" in v.detail
    assert v.max_abs_err == math.inf  # not 0 where NaN/inf positions differ


def test_nan_must_stay_nan_and_finite_must_stay_finite():
    eager = torch.tensor([math.nan, 1.0, 2.0])
    fp64 = eager.double()
    assert not judge(eager, torch.tensor([0.0, 1.0, 2.0]), fp64).ok
    assert not judge(eager, torch.tensor([math.nan, math.nan, 2.0]), fp64).ok  # NaN where both are finite
    assert not judge(eager, torch.tensor([math.nan, 1.0, math.inf]), fp64).ok
    assert judge(eager, eager.clone(), fp64).ok


def test_kind_rule_where_eager_and_fp64_disagree():
    # fp64 +inf (a true infinity), eager NaN: compiled may side with either, not with neither
    eager, fp64 = torch.tensor([math.nan]), torch.tensor([math.inf], dtype=torch.float64)
    assert judge(eager, torch.tensor([math.inf]), fp64).ok
    assert judge(eager, torch.tensor([math.nan]), fp64).ok
    assert not judge(eager, torch.tensor([-math.inf]), fp64).ok
    assert not judge(eager, torch.tensor([5.0]), fp64).ok
    # fp64 beyond float32's range: eager's +inf is right, compiled must keep it
    eager, fp64 = torch.tensor([math.inf, 1.0]), torch.tensor([1e39, 1.0], dtype=torch.float64)
    assert judge(eager, eager.clone(), fp64).ok
    assert not judge(eager, torch.tensor([-math.inf, 1.0]), fp64).ok
    assert not judge(eager, torch.tensor([math.nan, 1.0]), fp64).ok


# ---------------------------------------------------------------------------------------------
# case 7: indices are judged by the values they select, exactly


@pytest.mark.parametrize("shift", [1, 5])
def test_argmax_off_by_a_few_over_a_linspace_fails(shift):
    src = torch.linspace(0, 1, 10_000).reshape(10, 1000)
    ref = src.argmax(-1)
    v = judge(ref, ref - shift, index_info={"": (src, -1)})
    assert not v.ok and "selected values differ" in v.detail


def test_argmin_for_argmax_on_tiny_rows_fails():
    src = torch.randn(8, 100, generator=gen(5)) * 1e-5
    v = judge(src.argmax(-1), src.argmin(-1), index_info={"": (src, -1)})
    assert not v.ok


def test_exact_ties_pass():
    src = torch.tensor([[1e-5, 3e-5, 3e-5], [2.0, 0.5, 2.0]])
    assert judge(src.argmax(-1), torch.tensor([2, 2]), index_info={"": (src, -1)}).ok


# ---------------------------------------------------------------------------------------------
# case 8: Python floats at float64, signed zeros and strides as notes


def test_python_floats_are_judged_at_double_precision():
    assert not judge(0.1, 0.1 + 1e-9, 0.1).ok  # passed allclose(1e-4) at float32 tolerance
    assert judge(0.1, 0.1, 0.1).ok
    x = torch.randn(1000, generator=gen(6))
    eager, fp64 = x.sum().item(), x.double().sum().item()
    assert judge(eager, eager + 3 * (eager - fp64), fp64).ok  # eager's own error is the yardstick
    assert not judge(eager, eager * (1 + 1e-3), fp64).ok


def test_signed_zero_is_a_note_not_a_failure():
    eager = torch.tensor([-0.0, 1.0])
    v = judge(eager, torch.tensor([0.0, 1.0]), eager.double())
    assert (v.ok, v.kind) == (True, MATCH) and "signed zero differs" in v.detail


def test_strides_are_a_note_not_a_failure():
    eager = torch.randn(4, 6, generator=gen(7))
    got = eager.t().contiguous().t()
    v = judge(eager, got, eager.double())
    assert (v.ok, v.kind) == (True, MATCH) and "strides differ" in v.detail


# ---------------------------------------------------------------------------------------------
# the first oracle's false alarms, now passing


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_eager_overflow_row_with_finite_compiled_passes():
    # examples/mlp.py, bf16 sweep: a row holding 1e30; LayerNorm's variance overflows; eager's
    # row is all NaN, compiled's finite, fp64's finite: both wrong, differently
    eager = torch.tensor([[math.nan, math.nan, math.nan], [0.5, -0.25, 0.125]], dtype=torch.bfloat16)
    got = torch.tensor([[0.0, 0.0, 0.0], [0.5, -0.25, 0.125]], dtype=torch.bfloat16)
    fp64 = torch.tensor([[0.31, -0.05, -0.14], [0.5, -0.25, 0.125]], dtype=torch.float64)
    v = judge(eager, got, fp64)
    assert v.ok and "eager non-finite where fp64 is finite" in v.detail
    bad = got.clone()
    bad[1, 2] = 0.5  # the rest of the leaf is still judged
    assert not judge(eager, bad, fp64).ok


def test_mlp_bf16_with_a_1e30_row_real_compile():
    mlp = _load(REPO / "examples" / "mlp.py", "mlp_example")
    torch.manual_seed(0)
    model = mlp.Model().eval().bfloat16()
    model64 = copy.deepcopy(model).double()  # the bf16 parameters, in float64 (as to_fp64_inputs)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="inductor")
    for seed in range(3):
        x = torch.randn(8, 16, generator=gen(seed))
        x[2, 3] = 1e30
        x = x.bfloat16()
        with torch.no_grad():
            eager, got, fp64 = model(x), compiled(x), model64(x.double())
        assert bool(torch.isnan(eager[2]).all())
        v = judge(eager, got, fp64)
        assert v.ok, v.detail


def test_conv_accumulator_overflow_in_another_order_passes():
    # bf16 conv, inputs up to 1.69e38: the accumulator overflows; inf - inf depends on memory layout
    def block(x, w):
        return F.relu(F.conv2d(x, w, padding=1))

    torch._dynamo.reset()
    compiled = torch.compile(block, backend="inductor")
    for seed in range(3):
        g = gen(seed)
        x = torch.randn(2, 8, 12, 12, generator=g)
        huge = torch.rand(x.shape, generator=g) < 0.1
        x = torch.where(huge, torch.randn(x.shape, generator=g).sign() * 1.69e38, x).bfloat16()
        w = (torch.randn(16, 8, 3, 3, generator=g) * 0.3).bfloat16()
        with torch.no_grad():
            eager, got, fp64 = block(x, w), compiled(x, w), block(x.double(), w.double())
        v = judge(eager, got, fp64)
        assert v.ok, v.detail


def test_random_ops_are_nondeterministic_not_miscompiled():
    # a float64 sweep point of a program with dropout: eager run twice (no reseed) differs
    def prog(x):
        return F.dropout(x, 0.5, training=True) * 2

    x = torch.randn(64, 64, dtype=torch.float64)
    torch.manual_seed(0)
    ref, ref2 = prog(x), prog(x)
    torch.manual_seed(0)
    got = torch.compile(prog, backend="aot_eager")(x)  # draws differently from eager
    for v in (judge(ref, got, ref, ref2=ref2), judge(ref, got, ref, ref2=ref2, lenient=(None, ref))):
        assert (v.ok, v.kind) == (True, NONDETERMINISTIC), v.detail


def test_program_computing_in_bfloat16_is_judged_at_bfloat16():
    """A float32 model that casts to bfloat16 inside: Inductor keeps the intermediate in float32
    (emulate_precision_casts off), so compiled differs from eager by bfloat16 roundings; the eager
    run records the coarsest dtype it computes in and the judge uses it (CUDA corpus, act_gelu_bf16)."""
    import torch.nn.functional as F

    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference, judge_against

    def prog(x):
        return (F.gelu(x.to(torch.bfloat16)) * 3).float()

    x = torch.randn(64, 256, generator=torch.Generator().manual_seed(0)) * 2
    r = eager_reference(prog, lambda *a: {}, InputSet("given", (x,)))
    assert r.compute_dtype == "bfloat16"
    got = F.gelu(x.to(torch.bfloat16).float()) * 3  # as Inductor computes it: no rounding between ops
    assert not judge(r.ref, got, r.fp64).ok  # judged at float32, the roundings convict
    assert judge_against(r, got).ok
    assert not judge_against(r, got * 1.1).ok  # a real error is still caught at bfloat16


def test_compute_dtype_is_the_coarsest_of_the_eager_run():
    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference, judge_against
    x = torch.randn(8, 8)
    r = eager_reference(lambda x: (x.exp() @ x.t()).softmax(-1), lambda *a: {}, InputSet("given", (x,)))
    assert r.compute_dtype == "float32" and r.fp64.dtype == torch.float64
    # a float64 program that rounds to float32 inside (a float64 sweep of a variant with .float())
    r = eager_reference(lambda x: x.float().exp().double() * 3, lambda *a: {}, InputSet("given", (x.double(),)))
    assert r.compute_dtype == "float32"
    got = (x.double().exp() * 3)  # the compiled kernel kept float64 throughout
    assert not judge(r.ref, got, r.fp64).ok and judge_against(r, got).ok


def test_fp64_run_that_rounds_to_the_programs_dtype_is_no_judge_of_nan():
    """CUDA corpus, norm_layer_norm_bf16 on the special set: the model casts to bfloat16, a row with
    1e30 overflows the variance; eager NaN, compiled -0, and the fp64 run goes through bfloat16 too
    (NaN): no independent judge of which is right. Its cast is recorded (fp64_low), and the verdict
    is a note; without the record it failed. A real fp64 run's NaN still convicts."""
    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference

    def prog(x):  # a square in bfloat16 overflows at 1e30: inf - inf
        y = x.bfloat16()
        return (y * y - y * y + y).float()

    x = torch.randn(4, 64, generator=gen(0))
    x[1, 3] = 1e30
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (x,)))
    assert r.fp64_low == "bfloat16" and r.compute_dtype == "bfloat16"
    assert math.isnan(float(r.ref[1, 3])) and math.isnan(float(r.fp64[1, 3]))
    got = r.ref.clone()
    got[1, 3] = 1e30  # a compiled kernel that computed the square in float32 and cancelled it
    kw = dict(dtype_hint=r.compute_dtype, extreme_inputs=True, origins=r.origins)
    assert bool(overflow_of(r.origins[""])[1, 3])  # eager's own overflow: the square is inf of finite operands
    assert not judge(r.ref, got, r.fp64, **kw).ok
    v = judge(r.ref, got, r.fp64, fp64_low=r.fp64_low, **kw)
    assert v.ok and "rounds to bfloat16 inside" in v.detail, v.detail
    assert not judge(r.ref, got, r.fp64, fp64_low=r.fp64_low, dtype_hint=r.compute_dtype, extreme_inputs=True).ok
    # a constant made from integers is no rounding of the data: that fp64 run stays a judge
    r2 = eager_reference(lambda x: x * torch.arange(x.shape[-1]).float(), lambda *a: {}, InputSet("given", (x,)))
    assert r2.fp64_low is None


def test_float64_special_inputs_overflow_in_another_order_is_a_note_where_eagers_sums_reach_the_edge():
    """CUDA corpus, norm_layer_norm at the float64 sweep on the special set (values near 1.8e308):
    compiled's variance overflows (NaN rows) where eager's Welford does not. A float64 program has
    no independent fp64 run; where eager's own run shows the row's sums reach the edge of float64's range
    (its record: the layer norm's data of one sign add up to a quarter of the range) or eager itself
    overflowed on the row's path, a NaN there is an overflow in another order: not judged. Where eager's
    record shows neither, compiled's NaN is its own (a miscompile)."""
    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference

    e = torch.randn(4, 16, dtype=torch.float64, generator=gen(1))
    c = e.clone()
    c[2] = math.nan
    assert not judge(e, c, e.clone(), extreme_inputs=True).ok
    row = torch.arange(4)[:, None].expand(4, 16) == 2
    none = torch.zeros(4, 16, dtype=torch.bool)
    edge = {"": EagerOrigin(edge=EdgeOfRange(plus=row, minus=row, nan=row, after=none))}
    v = judge(e, c, e.clone(), extreme_inputs=True, origins=edge)
    assert v.ok and v.totals() == {"finite.non-finite": 16, "finite.edge-of-range": 16}, v.detail
    own = {"": EagerOrigin(overflow=row)}
    v = judge(e, c, e.clone(), extreme_inputs=True, origins=own)
    assert v.ok and "in another order" in v.detail, v.detail
    assert not judge(e, c, e.clone(), origins={"": EagerOrigin()}).ok
    # the record of a real layer norm: a row of 1e307 sums to 1.6e308, beyond a quarter of float64's range
    x = torch.randn(4, 16, dtype=torch.float64, generator=gen(2))
    x[2] = 1e307
    r = eager_reference(lambda t: F.layer_norm(t, (16,)), lambda *a: {}, InputSet("special-0", (x,)))
    assert bool(edge_of(r.origins[""]).nan[2].all()) and not bool(edge_of(r.origins[""]).nan[[0, 1, 3]].any())


def test_another_libm_within_1e5_of_typical_magnitude_passes():
    """A CUDA corpus campaign case (act_mish): compiled's softplus/tanh differ from eager's by 68 ulp
    at an element of 0.011 in a tensor whose typical magnitude is 0.3 (7.6e-7 absolute)."""
    fp64 = torch.linspace(-0.5, 0.9, 4096, dtype=torch.float64)
    fp64[7] = -0.011123
    eager = fp64.float()
    got = eager.clone()
    got[7] = -0.0111223
    assert judge(eager, got, fp64).ok
    got[7] = -0.0112  # 7.7e-5 off: beyond 1e-5 of typical magnitude
    assert not judge(eager, got, fp64).ok

# ---------------------------------------------------------------------------------------------
# NaN/inf, eager's own overflow, the fp64 rule


def test_nan_equals_nan_and_inf_sign_matters():
    r = torch.tensor([1.0, math.nan, math.inf, -math.inf])
    assert judge(r, r.clone()).ok
    g = r.clone()
    g[2] = -math.inf
    v = judge(r, g, to_fp64(r))
    assert (v.ok, v.leaf) == (False, "")
    assert "NaN/Inf" in v.detail and "(2,)" in v.detail
    g = r.clone()
    g[1] = 0.0
    assert not judge(r, g).ok
    g = r.clone()
    g[0] = math.nan
    assert not judge(r, g, to_fp64(r)).ok


def test_max_errors_are_finite_only():
    r = torch.tensor([1.0, math.nan, math.inf, 0.0])
    g = torch.tensor([1.5, math.nan, math.inf, 0.0])
    v = judge(r, g)
    assert v.max_abs_err == pytest.approx(0.5) and v.max_rel_err == pytest.approx(0.5)
    json.dumps(v.to_dict(), allow_nan=False)


def test_eager_overflow_where_compiled_matches_fp64_passes():
    # fp16 eager overflows in an intermediate where inductor keeps fp32: compiled is the better one.
    r = torch.tensor([math.inf, 1.0], dtype=torch.float16)
    g = torch.tensor([60000.0, 1.0], dtype=torch.float16)
    fp64 = torch.tensor([60000.0, 1.0], dtype=torch.float64)
    assert judge(r, g, fp64).ok
    # without fp64 nothing says who is right where eager's square overflowed (its run's record): 60000 >=
    # sqrt(65504); an infinity eager did not make of finite operands (an input's) stays judged
    from eqsat_test.runners.oracle.runs import EagerOrigin
    own = {"": EagerOrigin(overflow=torch.tensor([True, False]))}
    assert judge(r, g, origins=own).ok and "not judged" in judge(r, g, origins=own).detail
    assert not judge(r, g).ok
    assert not judge(r, torch.tensor([3.0, 1.0], dtype=torch.float16), origins=own).ok  # a small c where eager is inf
    # where eager overflowed (non-finite, fp64 finite) both are wrong and compiled is judged by kind
    # only: any finite value passes there; the other elements are still judged
    assert judge(r, torch.tensor([50000.0, 1.0], dtype=torch.float16), fp64).ok
    assert not judge(r, torch.tensor([60000.0, 2.0], dtype=torch.float16), fp64).ok


def test_fp64_rule_per_element():
    gen = torch.Generator().manual_seed(0)
    truth = torch.randn(10_000, generator=gen, dtype=torch.float64)
    noise = lambda: torch.randn(10_000, generator=gen, dtype=torch.float64)  # noqa: E731
    ref = (truth + 2e-4 * noise()).float()
    within = (truth + 3e-4 * noise()).float()  # 1.5x eager's error: far from eager, close to fp64's bound
    assert not judge(ref, within).ok  # no fp64 reference: compared with eager
    v = judge(ref, within, truth)
    assert v.ok, v.detail
    # each element may be at most M = 64 times eager's error (its own, or its peers' 75th percentile)
    v = judge(ref, (truth + 2e-2 * noise()).float(), truth)
    assert not v.ok and "exceed the fp64 bound" in v.detail
    # eager exact to the last bit: compiled may not be 3e-4 off
    v = judge(truth.float(), (truth + 3e-4 * noise()).float(), truth)
    assert not v.ok and "exceed the fp64 bound" in v.detail


def test_ill_conditioned_scalar_gets_wider_bound():
    # eager 60 ulps off (cancellation), compiled 49x further off: measured on inductor's 1M sum.
    # A scalar's yardstick is one sample of eager's error: M(1) = 256.
    truth = torch.tensor(6.28993294903637, dtype=torch.float64)
    ref = (truth + 4.5e-5).float()
    v = judge(ref, (truth + 2.2e-3).float(), truth)
    assert v.ok, v.detail
    assert not judge(ref, (truth + 5e-2).float(), truth).ok


def test_scalar_where_eager_is_noisy_is_judged_by_its_own_error():
    # a million values summing to ~0: eager is 1% off fp64 itself, compiled 33% (measured)
    truth = torch.tensor(0.00943229248514399, dtype=torch.float64)
    ref, got = torch.tensor(0.00933837890625), torch.tensor(0.00631)
    v = judge(ref, got, truth)
    assert v.ok, v.detail
    assert not judge(ref, torch.tensor(math.nan), truth).ok
    assert not judge(ref, torch.tensor(-0.05), truth).ok  # but not anything: 600x eager's error
    # fp64 exactly 0 gives no scale: Dynamo's absolute floor decides
    assert not judge(torch.tensor([1e-8, 0.0]), torch.tensor([5.0, 0.0]), torch.zeros(2, dtype=torch.float64)).ok


def test_dtype_hint_widens_tolerance():
    r = torch.linspace(1, 2, 100)
    g = r * (1 + 5e-4)
    assert not judge(r, g).ok
    assert judge(r, g, dtype_hint=torch.float16).ok
    assert judge(r, g, dtype_hint="bf16").ok
    assert tolerance(torch.float16) > tolerance(torch.float32) and tolerance(torch.bfloat16) > tolerance(torch.float16)


def test_overflow_on_injected_extreme_inputs_is_not_judged():
    # layer_norm over a row holding 1e30 in float32: eager's variance overflows (NaN), compiled
    # (Welford) gives finite values that are no closer to fp64: the program has no trustworthy
    # float32 answer there. Both wrong convicts no one: not judged, on injected special inputs and
    # on ordinary ones alike (a sweep's boundary values overflow the same way).
    r = torch.tensor([float("nan"), 1.0])
    g = torch.tensor([0.6248, 1.0])
    fp64 = torch.tensor([0.2714, 1.0], dtype=torch.float64)
    assert judge(r, g, fp64, extreme_inputs=True).ok
    assert judge(r, g, fp64).ok
    # a NaN that propagates from a NaN input is NaN in fp64 as well: still judged
    assert not judge(r, g, torch.tensor([float("nan"), 1.0], dtype=torch.float64), extreme_inputs=True).ok
    # and the rest of the leaf is judged as usual
    assert not judge(r, torch.tensor([0.6248, 2.0]), fp64, extreme_inputs=True).ok


def test_no_reference_eager_overflow_on_special_inputs_is_not_judged():
    """examples/mlp.py at default settings: a LayerNorm row of the special set overflows in eager
    (NaN row) and not in compiled (0.55); the variant has no independent fp64 run. Nothing says
    which is right: not judged on a special set; on ordinary inputs it still fails, and so does a NaN
    eager did not make itself (its run's record: the layer norm's kernel overflowed inside)."""
    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference
    from eqsat_test.runners.oracle.runs import overflow_of
    x = torch.tensor([[3e30, -1e30, 2e30, 5e29], [0.1, 0.2, 0.3, 0.4]])
    r = eager_reference(lambda t: torch.nn.functional.layer_norm(t, (4,)), lambda *a: {}, InputSet("special-0", (x,)))
    eager = r.ref
    assert bool(torch.isnan(eager[0]).all()) and bool(overflow_of(r.origins[""])[0].all())
    got = eager.clone()
    got[0] = torch.tensor([0.554, -1.2, 0.3, 0.35])
    v = judge(eager, got, None, extreme_inputs=True, origins=r.origins)
    assert v.ok and "not judged" in v.detail
    assert not judge(eager, got, None, origins=r.origins).ok
    assert not judge(eager, got, None, extreme_inputs=True).ok  # no record of eager's own overflow
    assert not judge(eager, got, eager.double(), extreme_inputs=True, origins=r.origins).ok  # an fp64 run that is NaN too convicts

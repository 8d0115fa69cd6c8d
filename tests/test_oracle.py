"""Tests of runners/oracle/judge.py: verdicts on nested outputs, with real torch.compile(inductor) runs on CPU."""

from __future__ import annotations

import collections
import copy
import json
import math

import pytest
import torch
import torch.nn as nn

from eqsat_test.runners.oracle.judge import (
    MATCH,
    MISMATCH,
    NONDETERMINISTIC,
    STRUCTURE_MISMATCH,
    Verdict,
    compare_eager,
    judge,
    leaves,
    to_fp64,
    tolerance,
)

Pair = collections.namedtuple("Pair", ["logits", "extra"])


def nested(x: torch.Tensor, scalar: float = 0.5):
    return (
        x,
        {"logits": [x * 2, None, (x.sum(), 3, True)], "aux": Pair(x.int(), scalar)},
        [[[(x > 0), "tag"]]],
    )


# ---------------------------------------------------------------------------------------------
# structures


def test_nested_structures_match_element_by_element():
    x = torch.randn(3, 4)
    v = judge(nested(x), nested(x.clone()))
    assert v == Verdict(True, MATCH, 0.0, 0.0, None, v.detail)
    assert v.detail.startswith("match: 10 leaves agree")


@pytest.mark.parametrize(
    "change, path",
    [
        (lambda o: o[1]["logits"][0].__setitem__((1, 2), 7.0), "[1]['logits'][0]"),
        (lambda o: o[1]["aux"].logits.__setitem__((0, 0), 99), "[1]['aux'][0]"),
        (lambda o: o[2][0][0][0].__setitem__((2, 3), ~o[2][0][0][0][2, 3]), "[2][0][0][0]"),
    ],
)
def test_deep_difference_is_located(change, path):
    x = torch.randn(3, 4)
    got = nested(x)
    change(got)
    v = judge(nested(x), got)
    assert (v.ok, v.kind, v.leaf) == (False, MISMATCH, path)
    assert path in v.detail


def test_python_scalars_in_structures():
    x = torch.randn(3, 4)
    # Python floats are doubles: judged at float64 precision (a float32-sized difference fails)
    assert judge(nested(x, 0.5), nested(x, 0.5 + 1e-15)).ok
    assert not judge(nested(x, 0.5), nested(x, 0.5 + 1e-7)).ok
    v = judge(nested(x, 0.5), nested(x, 0.6))
    assert (v.kind, v.leaf) == (MISMATCH, "[1]['aux'][1]")
    v = judge((1, True, "a"), (2, True, "a"))
    assert (v.kind, v.leaf, v.max_abs_err) == (MISMATCH, "[0]", 1.0)
    assert not judge((1, True, "a"), (1, False, "a")).ok
    assert not judge((1, True, "a"), (1, True, "b")).ok
    assert judge(None, None).ok


@pytest.mark.parametrize(
    "ref, got, path, words",
    [
        ((torch.ones(2), torch.ones(2)), (torch.ones(2),), "", "length 2 vs 1"),
        ((torch.ones(2),), [torch.ones(2)], "", "tuple vs list"),
        ({"a": torch.ones(2)}, {"b": torch.ones(2)}, "", "keys"),
        ([torch.ones(2, 3)], [torch.ones(3, 2)], "[0]", "shape (2, 3) vs (3, 2)"),
        ([torch.ones(2)], [torch.ones(2, dtype=torch.float64)], "[0]", "dtype"),
        ([torch.ones(2)], [None], "[0]", "type"),
        ([1], [1.0], "[0]", "type int vs float"),
        ([True], [1], "[0]", "type bool vs int"),
        ([(torch.ones(1),)], [torch.ones(1)], "[0]", "type"),
        ([Pair(1, 2)], [(1, 2)], "[0]", "type"),
    ],
)
def test_structure_mismatch(ref, got, path, words):
    v = judge(ref, got)
    assert (v.ok, v.kind, v.leaf) == (False, STRUCTURE_MISMATCH, path)
    assert words in v.detail


def test_leaves_paths_and_to_fp64():
    x = torch.randn(2)
    obj = (x, {"logits": [x.half(), 3]}, Pair(torch.arange(3), None))
    assert [p for p, _ in leaves(obj)] == ["[0]", "[1]['logits'][0]", "[1]['logits'][1]", "[2][0]", "[2][1]"]
    assert leaves(x)[0][0] == ""
    up = to_fp64(obj)
    assert up[0].dtype == up[1]["logits"][0].dtype == torch.float64
    assert up[1]["logits"][1] == 3 and up[2].logits.dtype == torch.int64 and isinstance(up[2], Pair)
    assert up[2].extra is None


# ---------------------------------------------------------------------------------------------
# exact leaves, NaN/Inf


def test_integers_and_bools_are_exact():
    a = torch.arange(10)
    b = a.clone()
    b[7] += 1
    v = judge(a, b)
    assert (v.ok, v.kind, v.max_abs_err) == (False, MISMATCH, 1.0)
    assert "(7,)" in v.detail and "exact" in v.detail
    assert not judge(torch.tensor([True, False]), torch.tensor([True, True])).ok
    assert judge(a, a.clone()).ok


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


# ---------------------------------------------------------------------------------------------
# the fp64 rule


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


# ---------------------------------------------------------------------------------------------
# indices under ties


def test_argmax_tie_judged_by_selected_values():
    src = torch.tensor([[3.0, 1.0, 3.0], [0.0, 5.0, 2.0]])
    ref = src.argmax(dim=1)  # [0, 1]
    info = {"": (src, 1)}
    tie = torch.tensor([2, 1])
    assert not judge(ref, tie).ok  # without index_info: exact
    v = judge(ref, tie, index_info=info)
    assert v.ok and v.max_abs_err == 0.0 and "tied" in v.detail
    wrong = torch.tensor([1, 1])
    v = judge(ref, wrong, index_info=info)
    assert (v.ok, v.kind, v.leaf) == (False, MISMATCH, "")
    assert "selected values differ" in v.detail
    # keepdim=True indices, and dim=None (flattened) argmax
    assert judge(src.argmax(1, keepdim=True), tie[:, None], index_info=info).ok
    flat = torch.tensor([[7.0, 1.0], [7.0, 0.0]])
    assert judge(flat.argmax(), torch.tensor(2), index_info={"": (flat, None)}).ok
    assert not judge(flat.argmax(), torch.tensor(1), index_info={"": (flat, None)}).ok


def test_out_of_range_and_repeated_indices_fail():
    src = torch.tensor([[1.0, 1.0, 1.0]])
    info = {"": (src, 1)}
    v = judge(torch.tensor([0]), torch.tensor([3]), index_info=info)
    assert not v.ok and "out of range" in v.detail
    assert not judge(torch.tensor([0]), torch.tensor([-1]), index_info=info).ok
    ref = src.sort(dim=1, stable=True).indices  # [[0, 1, 2]]
    assert judge(ref, torch.tensor([[2, 0, 1]]), index_info=info).ok  # another order of ties
    v = judge(ref, torch.tensor([[0, 0, 1]]), index_info=info)
    assert not v.ok and "repeat" in v.detail


def test_topk_and_sort_ties_in_nested_output():
    src = torch.tensor([[4.0, 9.0, 4.0, 1.0, 9.0]])
    vals, idx = src.topk(3, dim=1)  # values [9, 9, 4]
    ref = {"top": (vals, idx), "order": src.argsort(dim=1, descending=True)}
    got = {"top": (vals.clone(), torch.tensor([[4, 1, 2]])), "order": torch.tensor([[4, 1, 2, 0, 3]])}
    info = {"['top'][1]": (src, 1), "['order']": (src, -1)}
    assert judge(ref, got, index_info=info).ok
    got["top"] = (vals.clone(), torch.tensor([[4, 1, 3]]))  # picks the 1.0 instead of a 4.0
    v = judge(ref, got, index_info=info)
    assert (v.ok, v.leaf) == (False, "['top'][1]")


def test_index_tie_with_nan_source():
    src = torch.tensor([[math.nan, 2.0, math.nan]])
    assert judge(torch.tensor([0]), torch.tensor([2]), index_info={"": (src, 1)}).ok


# ---------------------------------------------------------------------------------------------
# nondeterminism


def test_nondeterministic_via_ref2():
    r = (torch.tensor([1.0, math.nan]), 3)
    v = judge(r, (torch.tensor([1.0, math.nan]), 3), ref2=(torch.tensor([1.0, math.nan]), 3))
    assert v.kind == MATCH  # NaN == NaN between the two eager runs
    v = judge(r, (torch.tensor([9.0, 9.0]), 3), ref2=(torch.tensor([1.5, math.nan]), 3))
    assert (v.ok, v.kind, v.leaf) == (True, NONDETERMINISTIC, "[0]")
    assert "eager run twice differs" in v.detail
    v = judge(r, r, ref2=(torch.tensor([1.0, math.nan]), 4))
    assert (v.kind, v.leaf) == (NONDETERMINISTIC, "[1]")


# ---------------------------------------------------------------------------------------------
# real torch.compile(backend="inductor") on CPU


def _compile(fn):
    torch._dynamo.reset()
    return torch.compile(fn, backend="inductor")


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_large_float32_sums_pass_with_fp64():
    # a sum of 2**20 elements, and rows of 2**14 that cancel to ~0, where eager's cascade sum is
    # far closer to fp64 than inductor's vectorized one
    compiled = _compile(lambda x, rows: (x.sum(), rows.sum(-1)))
    for seed in (0, 1, 2, 3, 4, 133):  # Dynamo's rule alone fails seed 133 on this CPU
        x = torch.randn(2**20, generator=torch.Generator().manual_seed(seed))
        rows = x.reshape(64, -1) - x.reshape(64, -1).mean(-1, keepdim=True)
        ref = (x.sum(), rows.sum(-1))
        fp64 = (x.double().sum(), rows.double().sum(-1))
        v = judge(ref, compiled(x, rows), fp64)
        assert v.ok, v.detail


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 32))

    def forward(self, x):
        y = self.net(x)
        return {"logits": y, "probs": y.softmax(-1), "pred": y.argmax(-1)}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_mlp_passes(dtype):
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(64, 64)
    fp64 = copy.deepcopy(model).double()(x.double())
    model = model.to(dtype)
    xh = x.to(dtype)
    with torch.no_grad():
        ref = model(xh)
        got = _compile(model)(xh)
    v = judge(ref, got, fp64, index_info={"['pred']": (ref["logits"], -1)})
    assert v.ok, v.detail


def test_perturbed_output_fails_with_detail():
    torch.manual_seed(0)
    model = MLP().eval()
    x = torch.randn(64, 64)
    with torch.no_grad():
        ref = model(x)
        got = _compile(model)(x)
        fp64 = copy.deepcopy(model).double()(x.double())
    info = {"['pred']": (ref["logits"], -1)}
    assert judge(ref, got, fp64, index_info=info).ok
    got["logits"][5, 7] += 1e-2
    v = judge(ref, got, fp64, index_info=info)
    assert (v.ok, v.kind, v.leaf) == (False, MISMATCH, "['logits']")
    assert "(5, 7)" in v.detail and "exceed the fp64 bound" in v.detail
    assert v.max_abs_err == pytest.approx(1e-2, rel=1e-2)


def test_dropout_in_training_mode_is_nondeterministic():
    model = nn.Sequential(nn.Linear(16, 16), nn.Dropout(0.5)).train()
    x = torch.randn(8, 16)
    ref, ref2, got = model(x), model(x), model(x)  # set aside before any comparison with got
    v = judge(ref, got, ref2=ref2)
    assert (v.ok, v.kind, v.leaf) == (True, NONDETERMINISTIC, "")


def test_compare_eager_sound_and_unsound_rewrites():
    x = torch.randn(2**16)
    seed_out = (x.sum(), x.abs())
    seed_fp64 = (x.double().sum(), x.double().abs())
    reassociated = (x.reshape(256, 256).sum(0).sum(), torch.where(x < 0, -x, x))
    assert compare_eager(seed_out, reassociated, seed_fp64).ok
    unsound = (x.sum(), x.abs() * 1.001)
    v = compare_eager(seed_out, unsound, seed_fp64)
    assert (v.ok, v.leaf) == (False, "[1]")


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

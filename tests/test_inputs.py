"""Tests of runners/oracle/inputs.py: given, random, special, huge and domain input sets, and memory layouts."""

from __future__ import annotations

import math

import pytest
import torch

from eqsat_test.runners.oracle.inputs import (
    DOMAIN_FRACTION,
    HUGE_INT_ANCHORS,
    KINDS,
    InputSet,
    domain_values,
    input_sets,
    special_values,
    to_device_as_is,
    to_fp64_inputs,
    with_layout,
)


def base_inputs():
    torch.manual_seed(0)
    x = torch.randn(64, 32) * 3 + 5  # activations
    w = torch.randn(32, 32, requires_grad=True)  # a parameter
    idx = torch.randint(0, 100, (500,))  # indices into a 100-row table
    tgt = torch.tensor([1, 2, -100, 3, 9] * 40)  # targets with an ignore_index sentinel
    ints = torch.randint(-50, 50, (400,), dtype=torch.int32)  # plain integers
    mask = torch.rand(10, 10) > 0.3
    half = torch.randn(100, 100).half().t()  # non-contiguous fp16
    var = torch.rand(300) + 0.1  # non-negative (running variance)
    return [x, w, idx, tgt, ints, mask, half, var, 3, "mean", None, [torch.ones(4)]]


IS_PARAM = [False, True, False, False, False, False, False, True, False, False, False, False]


def same(a, b):
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and bool(((a == b) | (a != a) & (b != b)).all())
    if isinstance(a, list):
        return all(same(u, v) for u, v in zip(a, b))
    return a == b


def test_kinds_names_and_given_unchanged():
    base = base_inputs()
    sets = input_sets(base, is_param=IS_PARAM, seed=7)
    assert [s.name for s in sets] == ["given", "random-7", "special-7"]
    assert all(isinstance(s, InputSet) and isinstance(s.inputs, tuple) for s in sets)
    assert all(a is b for a, b in zip(sets[0].inputs, base))
    assert [s.name for s in input_sets(base, kinds=("random",))] == ["random-0"]
    with pytest.raises(ValueError):
        input_sets(base, kinds=("bogus",))
    with pytest.raises(ValueError):
        input_sets(base, is_param=[True])


def test_shapes_dtypes_strides_and_flags_preserved():
    base = base_inputs()
    for s in input_sets(base, is_param=IS_PARAM, seed=1, kinds=KINDS)[1:]:
        for a, b in zip(base, s.inputs):
            if isinstance(a, torch.Tensor):
                assert (b.shape, b.dtype, b.device, b.stride()) == (a.shape, a.dtype, a.device, a.stride())
                assert b.requires_grad == a.requires_grad and b.is_leaf
                assert not torch.equal(a, b)
            elif isinstance(a, list):
                assert isinstance(b, list) and b[0].shape == a[0].shape
            else:
                assert b is a  # non-tensors pass through


def test_deterministic_by_seed():
    base = base_inputs()
    a = input_sets(base, is_param=IS_PARAM, seed=3, kinds=KINDS)
    b = input_sets(base, is_param=IS_PARAM, seed=3, kinds=KINDS)
    c = input_sets(base, is_param=IS_PARAM, seed=4, kinds=KINDS)
    for i in range(1, len(KINDS)):
        assert all(same(u, v) for u, v in zip(a[i].inputs, b[i].inputs))
        assert not same(a[i].inputs[0], c[i].inputs[0])


def test_random_floats_follow_the_tensor_scale():
    base = base_inputs()
    r = input_sets(base, is_param=IS_PARAM, seed=0, kinds=("random",))[0].inputs
    x = r[0]
    assert abs(float(x.mean()) - 5) < 0.5 and abs(float(x.std()) - 3) < 0.5
    assert bool((r[7] >= 0).all())  # non-negative stays non-negative
    assert bool(torch.isfinite(r[6]).all())


def specials_of(t):
    pool = special_values(t.dtype).double()
    v = t.double().reshape(-1, 1)
    hit = (v == pool) | (torch.isnan(v) & torch.isnan(pool))
    return hit.any(1)


def test_specials_present_in_non_params_absent_in_params():
    base = base_inputs()
    sp = input_sets(base, is_param=IS_PARAM, seed=2, kinds=("special",))[0].inputs
    x, w, half, var = sp[0], sp[1], sp[6], sp[7]
    frac = float(specials_of(x).double().mean())
    assert 0.05 < frac < 0.15
    assert bool(torch.isnan(x).any() or torch.isinf(x).any())
    assert bool(specials_of(half).any()) and half.dtype == torch.float16
    for p in (w, var):  # parameters: random-normal, no special values
        assert bool(torch.isfinite(p).all()) and not bool(specials_of(p).any())
    ints = sp[4]
    assert bool((ints == torch.iinfo(torch.int32).max).any() or (ints == torch.iinfo(torch.int32).min).any())


def test_specials_cover_subnormals_and_huge():
    base = [torch.randn(20_000)]
    x = input_sets(base, seed=5, kinds=("special",))[0].inputs[0]
    fi = torch.finfo(torch.float32)
    assert bool(((x != 0) & (x.abs() < fi.smallest_normal)).any())  # subnormals
    assert bool((x.abs() >= 1e30).any() & torch.isfinite(x).any())
    assert bool((x == math.inf).any() and (x == -math.inf).any())
    assert bool(((x == 0) & torch.signbit(x)).any())  # -0.0


def test_index_like_ints_stay_in_range():
    base = base_inputs()
    for s in input_sets(base, is_param=IS_PARAM, seed=9, kinds=KINDS)[1:]:
        idx, tgt = s.inputs[2], s.inputs[3]
        assert int(idx.min()) >= 0 and int(idx.max()) <= 99
        assert set(tgt.unique().tolist()) <= {-100, 1, 2, 3, 4, 5, 6, 7, 8, 9}
        assert bool((tgt == -100).any())


def test_special_values_per_dtype():
    f = special_values(torch.float32)
    assert f.dtype == torch.float32
    assert bool(torch.isnan(f).any()) and bool((f == math.inf).any()) and bool((f == -math.inf).any())
    assert bool(((f == 0) & torch.signbit(f)).any())
    assert float(torch.tensor(1e30)) in f.tolist() and torch.finfo(torch.float32).max / 2 in f.tolist()
    h = special_values(torch.float16)
    assert h.dtype == torch.float16 and bool(torch.isfinite(h[torch.isfinite(h)]).all())
    assert torch.finfo(torch.float16).max / 2 in h.tolist()
    i = special_values(torch.int64).tolist()
    assert set(i) == {torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).max, 0, 1, -1}
    assert set(special_values(torch.uint8).tolist()) == {0, 1, 255}
    assert special_values(torch.bool).tolist() == [False, True]


def test_to_fp64_inputs():
    w = torch.randn(3, requires_grad=True)
    out = to_fp64_inputs([w, torch.arange(3), 2.5, [torch.ones(2, dtype=torch.float16)]])
    assert isinstance(out, tuple)
    assert out[0].dtype == torch.float64 and not out[0].requires_grad
    assert out[1].dtype == torch.int64 and out[2] == 2.5 and out[3][0].dtype == torch.float64
    assert torch.equal(out[0], w.detach().double())


# ----------------------------------------------------------------------------------------------
# huge and domain sets, layouts


def test_kind_names_and_the_cli_default():
    from eqsat_test.runners.cli.options import INPUT_KINDS
    assert INPUT_KINDS == KINDS  # the command line's --inputs default and its check
    names = [s.name for s in input_sets(base_inputs(), is_param=IS_PARAM, seed=7, kinds=KINDS)]
    assert names == ["given", "random-7", "special-7", "huge-7", "domain-7"]


def test_huge_floats_are_whole_tensors_near_overflow_and_finite():
    base = base_inputs()
    sets = {s.name.split("-")[0]: s.inputs for s in input_sets(base, is_param=IS_PARAM, seed=2, kinds=KINDS)}
    x, h = sets["huge"][0], sets["huge"][6]
    assert bool(torch.isfinite(x).all()) and 1e30 <= float(x.abs().max()) <= 1.2e37
    assert float(x.abs().median()) > 1e28  # the whole tensor, not a sprinkle
    assert torch.equal(torch.sign(x), torch.sign(sets["random"][0]))  # the random values, scaled
    assert h.dtype == torch.float16 and bool(torch.isfinite(h).all()) and float(h.abs().max()) >= 5e3
    for i in (1, 7):  # parameters keep their random values
        assert torch.equal(sets["huge"][i], sets["random"][i])
    peaks = {float(input_sets(base, is_param=IS_PARAM, seed=k, kinds=("huge",))[0].inputs[0].abs().max())
             for k in range(6)}
    assert len(peaks) == 6 and all(1e30 <= p <= 1.2e37 for p in peaks)  # a scale drawn per set


def test_huge_ints_near_word_and_float_boundaries_index_like_unchanged():
    big = torch.randint(-50, 50, (4000,), dtype=torch.int64)  # not index-like: it has negatives
    idx = torch.randint(0, 100, (500,))
    r, h = input_sets([big, idx], seed=1, kinds=("random", "huge"))
    v = h.inputs[0]
    anchors = torch.tensor([2**k for k in HUGE_INT_ANCHORS] + [2**63 - 1])
    near = ((v.abs().unsqueeze(1) - anchors).abs() <= 4).any(1) | (v == -(2**63))
    assert bool(near.all())
    for k in (31, 53, 62):  # index arithmetic past int32, float64's exact range, a doubling's overflow
        assert bool(((v.abs() - 2**k).abs() <= 4).any())
    assert bool((v < 0).any()) and bool((v > 0).any())
    assert torch.equal(h.inputs[1], r.inputs[1])  # indices stay valid indices
    i8 = input_sets([torch.randint(-5, 5, (1000,), dtype=torch.int8)], kinds=("huge",))[0].inputs[0]
    assert i8.dtype == torch.int8 and int(i8.int().abs().min()) >= 127 - 4  # near its max: 2**7 does not fit


def test_domain_values_per_dtype():
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        v = domain_values(dt)
        assert v.dtype == dt and bool(torch.isfinite(v).all())
        fi, d = torch.finfo(dt), v.double()
        below_one = 1 - fi.eps / 2  # the float just below 1
        assert {1.0, -1.0, below_one, -below_one, 1 + fi.eps, -1 - fi.eps} <= set(d.tolist())
        assert bool(((d != 0) & (d.abs() < fi.smallest_normal)).any())  # subnormals
        assert bool(((d == 0) & torch.signbit(d)).any())
        assert bool((d.double().exp().to(dt) == math.inf).any()) and bool(torch.isfinite(d.exp().to(dt)).any())
    f = domain_values(torch.float32).double()
    assert bool(((f - 1).abs() <= 1e-6).sum() >= 4) and bool(((f + 1).abs() <= 1e-6).sum() >= 3)


def test_domain_set_puts_edges_in_data_tensors_only():
    base = base_inputs()
    sets = {s.name.split("-")[0]: s.inputs for s in input_sets(base, is_param=IS_PARAM, seed=4, kinds=KINDS)}
    x, pool = sets["domain"][0].double(), domain_values(torch.float32).double()
    hit = (x.reshape(-1, 1) == pool).any(1)
    assert abs(float(hit.double().mean()) - DOMAIN_FRACTION) < 0.1
    assert torch.equal(sets["domain"][1], sets["random"][1])  # a parameter
    assert torch.equal(sets["domain"][4], sets["random"][4])  # integers keep their random values
    assert bool(torch.isfinite(sets["domain"][0]).all())


def test_layouts_keep_values_and_change_strides():
    x = torch.randn(5, 6, 7)
    s = with_layout(x, "strided")
    assert torch.equal(s, x) and not s.is_contiguous() and s.storage_offset() == 1
    assert s.stride()[-2:] != x.stride()[-2:]
    v = with_layout(torch.arange(9.0), "strided")
    assert torch.equal(v, torch.arange(9.0)) and v.stride() == (2,)
    e = with_layout(x, "expanded")
    assert e.shape == x.shape and e.stride()[0] == 0 and torch.equal(e[3], x[0])
    assert with_layout(torch.tensor(2.0), "strided").dim() == 0
    ones = torch.randn(1, 1)
    assert with_layout(ones, "expanded") is ones  # nothing to broadcast
    w = torch.randn(3, 4, requires_grad=True)
    assert with_layout(w, "strided").requires_grad
    with pytest.raises(ValueError):
        with_layout(x, "diagonal")


def test_layouts_survive_save_load_and_a_move(tmp_path):
    x = torch.randn(4, 6)
    saved = [with_layout(x, "strided"), with_layout(x, "expanded")]
    torch.save(saved, tmp_path / "inputs.pt")
    back = torch.load(tmp_path / "inputs.pt", weights_only=True)
    for a, b in zip(saved, back):
        assert torch.equal(a, b) and a.stride() == b.stride() and a.storage_offset() == b.storage_offset()
    for t in saved:
        assert to_device_as_is(t, "cpu") is t
        moved = to_device_as_is(t, "meta")
        assert (moved.shape, moved.stride(), moved.storage_offset()) == (t.shape, t.stride(), t.storage_offset())

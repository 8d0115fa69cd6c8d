"""Tests of runners/oracle/inputs.py: given, random and special input sets."""

from __future__ import annotations

import math

import pytest
import torch

from eqsat_test.runners.oracle.inputs import InputSet, input_sets, special_values, to_fp64_inputs


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
    for s in input_sets(base, is_param=IS_PARAM, seed=1)[1:]:
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
    a = input_sets(base, is_param=IS_PARAM, seed=3)
    b = input_sets(base, is_param=IS_PARAM, seed=3)
    c = input_sets(base, is_param=IS_PARAM, seed=4)
    for i in (1, 2):
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
    for s in input_sets(base, is_param=IS_PARAM, seed=9)[1:]:
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

"""Tests of runners/oracle/exact.py through the judge: integer and bool leaves exactly, index leaves (argmax, topk, sort) by the values of eager's source they select."""

from __future__ import annotations

import math

import torch

from eqsat_test.runners.oracle.judge import MISMATCH, judge


def test_integers_and_bools_are_exact():
    a = torch.arange(10)
    b = a.clone()
    b[7] += 1
    v = judge(a, b)
    assert (v.ok, v.kind, v.max_abs_err) == (False, MISMATCH, 1.0)
    assert "(7,)" in v.detail and "exact" in v.detail
    assert not judge(torch.tensor([True, False]), torch.tensor([True, True])).ok
    assert judge(a, a.clone()).ok

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

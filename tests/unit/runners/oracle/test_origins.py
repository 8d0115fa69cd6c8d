"""The eager run's record (runners/oracle/origins.py): each leaf's dtypes, random draws and eager's own overflow, through views, in-place writes and kernels; eager's values untouched."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from eqsat_test.runners.oracle.origins import EagerOrigins, replay
from eqsat_test.runners.oracle.runs import edge_of, overflow_of


def record(prog, *inputs):
    rec = EagerOrigins(overflow=True)
    with rec:
        out = prog(*inputs)
    assert not rec.failed
    return out, rec.origins(out)


def test_the_eager_run_records_dtypes_and_draws_and_a_replay_its_overflow():
    """The eager run itself records the cheap part (no pass over any op's results); the overflow comes from the
    program run again, only where a rule asks for it."""
    x = torch.tensor([100.0, 1.0])
    rec = EagerOrigins()
    with rec:
        out = 1 / torch.exp(x)
    assert not rec.overflow
    o = rec.origins(out, replay(lambda t: 1 / torch.exp(t), (x,)))[""]
    assert o.dtype == torch.float32 and callable(o.overflow) and overflow_of(o).tolist() == [True, False]


def over(o) -> list[bool]:
    return [] if o.overflow is None else o.overflow.reshape(-1).tolist()


def test_each_leaf_has_the_dtypes_of_its_own_path():
    x32, x64 = torch.randn(4), torch.randn(4, dtype=torch.float64)
    _, o = record(lambda a, b: (torch.erfinv(b.clamp(-0.5, 0.5)), a.sigmoid(), a.double() * b, a.half().double()), x32, x64)
    assert [o[p].dtype for p in ("[0]", "[1]", "[2]", "[3]")] == [torch.float64, torch.float32, torch.float64,
                                                                 torch.float16]
    out = torch.zeros(4, dtype=torch.float64)
    _, o = record(lambda a, y: (y[:2].copy_(a[:2] * 3), y)[1], x32, out)  # written through a view: its base too
    assert o[""].dtype == torch.float32


def test_a_random_draw_and_unwritten_memory_are_random_and_nothing_else_is():
    x = torch.randn(8)
    _, o = record(lambda a: (F.dropout(a, 0.5, training=True), torch.empty(3), a * 2, a.clone().uniform_()), x)
    assert [o[f"[{k}]"].random for k in range(4)] == [True, True, False, True]


def test_eager_values_are_untouched_and_its_own_overflow_is_marked():
    x = torch.tensor([100.0, 1.0, math.inf, 2.0])
    out, o = record(lambda a: 1 / torch.exp(a), x)
    assert torch.equal(out, 1 / torch.exp(x))
    assert over(o[""]) == [True, False, False, False]  # exp(100) is inf of a finite operand; an input inf is not


def test_an_infinity_a_sum_carries_in_is_no_overflow_but_one_of_its_finite_terms_is():
    x = torch.tensor([[math.inf, 3e38, 3e38], [3e38, 3e38, 1.0], [1.0, 2.0, 3.0]])
    _, o = record(lambda a: a.sum(-1), x)
    assert over(o[""]) == [False, True, False]


def test_a_kernel_that_overflowed_inside_is_marked_where_its_result_is_far_from_float64():
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(0))
    x[:, 1] *= 1e30  # batch norm: this channel's variance is inf in float32, its result 0
    out, o = record(lambda a: F.batch_norm(a, None, None, training=True), x)
    assert bool((out[:, 1] == 0).all())
    m = o[""].overflow
    assert bool(m[:, 1].all()) and not bool(m[:, [0, 2, 3]].any())


def test_marks_follow_views_comparisons_and_conversions():
    x = torch.tensor([100.0, 1.0, 2.0, math.nan])
    _, o = record(lambda a: (torch.exp(a)[:2] > 5, torch.exp(a).view(2, 2), a.long()), x)
    assert over(o["[0]"]) == [True, False] and over(o["[1]"]) == [True, False, False, False]
    assert over(o["[2]"]) == [False, False, False, True]  # NaN to an integer: undefined in C++


def test_marks_of_undefined_conversions_reach_a_reduction_over_them():
    """Integers converted undefinedly may hold any value: an argmin over windows of two of them, or an any() of
    comparisons of them, depends on them wherever one more of each, or the dtype's extremes, change it (a probe
    of one more of each leaves a window of two marked values as it was); a window of two defined ones does not."""
    x = torch.tensor([[1e6, -1e6, 5.0, 7.0, 2.0], [math.nan, 3.0, 4.0, 300.0, 1.0]])
    _, o = record(lambda a: (a.to(torch.int8).unfold(1, 2, 1).argmin(2).reshape(-1),
                             (a.to(torch.int8) > 4)[:, :2].any(-1), (a.to(torch.int8) > 4).any(-1)), x)
    assert over(o["[0]"]) == [True, True, False, False, True, False, True, True]
    assert over(o["[1]"]) == [True, True] and over(o["[2]"]) == [False, True]  # row 0: 5 > 4 decides it


def kinds(o, k: int) -> str:
    """What the record admits at flat element k of a leaf: +, -, n (NaN), a (any value after a further op)."""
    ed = edge_of(o)
    if ed is None:
        return ""
    return "".join(ch for ch, m in zip("+-na", (ed.plus, ed.minus, ed.nan, ed.after)) if bool(m.reshape(-1)[k]))


def test_partial_results_at_the_edge_of_the_range_in_some_order_of_an_ops_terms():
    """A sum's terms of each sign, a cumprod's runs of consecutive factors, a matmul's products of each sign: the
    kinds another order of them gives where they reach a quarter of the range; not a variance's squares."""
    x = torch.tensor([[2e38, -2e38, 1.0], [3e37, 3e37, 3e37], [1e35, 1e35, 1e35]])
    _, o = record(lambda a: a.sum(-1), x)
    assert [kinds(o[""], k) for k in range(3)] == ["+-n", "+", ""]  # 9e37 reaches 8.5e37 of one sign
    _, o = record(lambda a: torch.cumprod(a, 0), torch.tensor([2.0, 0.0, 1e20, 1e20, 2.0]))
    assert [kinds(o[""], k) for k in range(5)] == ["", "", "", "n", "n"]  # 0 · (1e20 · 1e20) in a blocked order
    _, o = record(lambda a, b: a @ b, torch.tensor([[2e38, -2e38], [1.0, 2.0]]), torch.ones(2, 1))
    assert [kinds(o[""], k) for k in range(2)] == ["+-n", ""]
    _, o = record(lambda a: (a.std(-1), a.var(-1) * 0), torch.randn(4, 64) * 1e30)
    assert edge_of(o["[0]"]) is None and edge_of(o["[1]"]) is None  # its data sums: 6e31, far from 3.4e38
    _, o = record(lambda a: F.layer_norm(a, (3,)), x)
    assert [kinds(o[""], k) for k in (0, 3, 6)] == ["+-n", "+-n", ""]


def test_a_products_partial_products_below_the_smallest_normal_in_some_order():
    """A product's factors below 1 multiplied first (a cumprod's: a run of consecutive ones) fall below float32's
    smallest normal: its result admits 0 and the exact product within the rounding of subnormal partials (all of
    it where a partial falls below the subnormals: between 0 and twice the product), NaN where an infinity among
    the factors, or partials beyond the range, meet a flushed partial, and the infinity that is the product; a
    cast carries the span, rounded, a view takes its part, a further op makes any value of it. A product with a
    zero, or whose partial products stay normal, admits nothing."""
    x = torch.tensor([[1e-30, 1e-20, 1e30, 1e20, 3.0], [2.0, 0.5, 4.0, 0.25, 3.0], [1e-30, 1e-20, 0.0, 1e20, 2.0],
                      [-1e-30, 1e-20, math.inf, 1.0, 2.0], [1e-20, 1e-20, 4.0, 0.5, 3.0]])
    _, o = record(lambda a: (a.prod(-1), a.prod(-1, keepdim=True).double()[:, 0], torch.cumprod(a, 1),
                             a.prod(-1) * 2), x)
    ed = edge_of(o["[0]"])
    assert ed.under.tolist() == [True, False, False, True, True]
    assert ed.nan.tolist() == [True, False, False, True, False]  # 1e-30 · 1e-20 flushed, 1e30 · 1e20 beyond: 0 · inf
    exact = 1e-30 * 1e-20 * 1e30 * 1e20 * 3.0  # float32's factors, in float64
    low, high = ed.low.tolist(), ed.high.tolist()
    assert low[0] == 0.0 and math.isclose(high[0], 2 * exact, rel_tol=1e-6)  # 1e-50 is below float32's subnormals
    assert low[3] == high[3] == -math.inf and ed.minus.tolist()[3]  # the product: -inf, exactly
    # 1e-20 · 1e-20 · 0.5 = 5e-41 is subnormal (spacing 1.4e-45): the exact 6e-40 within a few of its roundings
    assert low[4] < 6e-40 < high[4] and 1e-6 < (high[4] - low[4]) / 6e-40 < 1e-3
    assert [math.isnan(v) for v in low[1:3]] == [True, True]
    assert edge_of(o["[1]"]).under.tolist() == ed.under.tolist() and edge_of(o["[1]"]).low[0] == 0.0
    cum = edge_of(o["[2]"])
    assert cum.under[0].tolist() == [False, True, True, True, True] and not bool(cum.under[1].any())
    assert cum.under[2].tolist() == [False, True, False, False, False]  # a 0 among the factors: 0 in every order
    assert edge_of(o["[3]"]).under is None or not bool(edge_of(o["[3]"]).under.any())
    assert kinds(o["[3]"], 0) == "+-na" and kinds(o["[3]"], 1) == ""


def test_edge_codes_follow_casts_views_and_further_ops():
    x = torch.tensor([[3e37, 3e37, 3e37], [1.0, 2.0, 3.0]])
    _, o = record(lambda a: (a.sum(-1).double(), a.sum(-1)[:1], a.sum(-1) > 0, a.sum(-1).long(), a.sum(-1) * 2), x)
    assert [kinds(o[p], 0) for p in ("[0]", "[1]", "[2]", "[3]", "[4]")] == ["+", "+", "+-na", "+-na", "+-na"]
    assert [kinds(o[p], 1) for p in ("[0]", "[2]", "[4]")] == ["", "", ""]
    # the replay gives the record where the eager run itself does not track it
    rec = EagerOrigins()
    with rec:
        out = x.sum(-1)
    assert kinds(rec.origins(out, replay(lambda t: t.sum(-1), (x,)))[""], 0) == "+"

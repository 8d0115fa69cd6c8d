"""The oracle's exact judgements (rule 4): integer and bool leaves, and index leaves by the values they select (rules.py's EXACT and INDEX scopes); with the per-leaf result and the position helpers the judge shares."""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.engine import Hit, apply, behaviour
from eqsat_test.runners.oracle.rules import EXACT, INDEX
from eqsat_test.runners.oracle.verdict import RuleCount


@dataclass
class LeafResult:
    ok: bool
    abs_err: float = 0.0
    rel_err: float = 0.0
    detail: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)
    rules: list[RuleCount] = dataclasses.field(default_factory=list)  # the rules that fired, in order
    failing: tuple[int, ...] = ()  # flat indices of the first FAILING_KEPT failing elements; () where not elementwise


FAILING_KEPT = 64  # failing elements a verdict names (the referee judges these: runners/oracle/referee.py)


def failing_of(mask: torch.Tensor) -> tuple[int, ...]:
    """The flat indices of the first FAILING_KEPT elements where `mask` is true."""
    return tuple(int(k) for k in torch.nonzero(mask.reshape(-1)).reshape(-1)[:FAILING_KEPT])


def fmt(x: float) -> str:
    return f"{x:.6g}"


def index_str(flat_pos: int, shape: tuple[int, ...]) -> str:
    if not shape:
        return "()"
    idx = []
    for size in reversed(shape):
        idx.append(flat_pos % size)
        flat_pos //= size
    return "(" + ", ".join(str(i) for i in reversed(idx)) + (",)" if len(shape) == 1 else ")")


def first_true(mask: torch.Tensor) -> int:
    """Flat position of the first True in a mask (which has at least one)."""
    return int(mask.reshape(-1).nonzero()[0, 0])


@dataclass(frozen=True)
class ExactLeaf:
    """An integer or bool leaf as the EXACT rules see it."""

    r: torch.Tensor  # eager
    g: torch.Tensor  # compiled
    what: str
    alts: tuple  # the fp64 run and the runs under other roundings (their integer leaves count)
    beyond: Any  # rule 8: eager's own overflow, or no reference (a mask, None, or a call that makes it)
    # rule 8: eager's own partial results at the edge of the range (a runs.EdgeOfRange, None, or a call that makes it)
    edge: Any = None


@behaviour("exact.differs")
def exact_differs(x: ExactLeaf, _pending) -> Hit:
    return Hit(x.r != x.g, lambda n: "(exact)")


@behaviour("exact.beyond-range")
def exact_beyond_range(x: ExactLeaf, pending: torch.Tensor) -> Hit | None:
    beyond = x.beyond() if callable(x.beyond) else x.beyond
    if beyond is None:
        return None
    return Hit(pending & beyond,
               lambda n: f"{x.what}: compiled differs from eager at {n} elements that depend on an intermediate eager "
                         f"itself overflowed, on a conversion of NaN/inf to an integer or on the sign of a NaN: "
                         f"not judged")


@behaviour("exact.edge-of-range")
def exact_edge_of_range(x: ExactLeaf, pending: torch.Tensor) -> Hit | None:
    edge = x.edge() if callable(x.edge) else x.edge
    if edge is None:
        return None
    return Hit(pending & edge.after.reshape(pending.shape),
               lambda n: f"{x.what}: compiled differs from eager at {n} elements that depend on partial results of "
                         f"eager's own reductions or scans within {nx.EDGE_FACTOR:g}x of the range in some order of "
                         f"their terms (or a product's below the smallest normal number): an overflow in another order "
                         f"(or an underflow), not judged")


@behaviour("exact.between-runs")
def exact_between_runs(x: ExactLeaf, pending: torch.Tensor) -> Hit:
    lo = hi = x.r.to(torch.int64) if x.r.dtype != torch.uint64 else x.r
    for a in x.alts:
        if isinstance(a, torch.Tensor) and a.shape == x.g.shape and not (a.is_floating_point() or a.is_complex()):
            a = nx.dense(a).to(x.g.device, lo.dtype)
            lo, hi = torch.minimum(lo, a), torch.maximum(hi, a)
    gg = x.g.to(lo.dtype)
    return Hit(pending & (lo <= gg) & (gg <= hi) & (lo != hi),
               lambda n: f"{x.what}: compiled differs from eager at {n} elements where it lies between eager and the fp64 "
                         f"run, as is or under another rounding of the intermediates: not judged")


def judge_exact(r: torch.Tensor, g: torch.Tensor, what: str, alts: list = (), beyond: Any = None,
                edge: Any = None) -> LeafResult:
    """Integer and bool leaves: exact; but an element where compiled lies between eager and the fp64
    run, as is, under Monte Carlo rounding of the intermediates or as an alternative run (`alts`), is
    decided by rounding (a count of nonzero FMA residuals: eager 1028, such a run 2048, compiled
    2047): a note. `beyond`: elements that depend on an intermediate eager itself overflowed, or on an
    undefined conversion of NaN/inf to an integer (rule 8): not judged (a mask, or a call that makes it where
    an element is charged); `edge`: where they depend on eager's own partial results at the edge of the range
    (a runs.EdgeOfRange, or a call that makes it): its elements `after` such a result not judged either."""
    out = apply(EXACT, ExactLeaf(r, g, what, tuple(alts), beyond, edge))
    diff = out.charges["exact.differs"]
    if r.dtype == torch.bool:
        abs_err = rel_err = 1.0 if bool(diff.any()) else 0.0
    else:
        abs_err, rel_err = nx.max_errors(r.to(torch.float64), g.to(torch.float64))
    if not bool(diff.any()):
        return LeafResult(True, abs_err, rel_err, notes=out.notes, rules=out.counts)
    p = first_true(diff)
    return LeafResult(
        False, abs_err, rel_err,
        f"{what}: {int(diff.sum())} of {r.numel()} elements differ (exact), first at "
        f"{index_str(p, tuple(r.shape))}: eager {r.reshape(-1)[p].item()}, compiled {g.reshape(-1)[p].item()}",
        rules=out.counts, failing=failing_of(diff),
    )


def judge_value(what: str, same: bool) -> list[RuleCount]:
    """A Python value (an int, a bool, another object) as one exact element, 0 for eager's and 1 for compiled's
    where they differ: the EXACT rules' counts (exact.differs)."""
    return apply(EXACT, ExactLeaf(torch.tensor(0), torch.tensor(int(not same)), what, (), None)).counts


def judge_index(r: torch.Tensor, g: torch.Tensor, source: torch.Tensor, dim: int | None,
                 hint: torch.dtype | None, what: str) -> LeafResult:
    """Index leaves (argmax/topk/sort...) judged by the values of eager's `source` they select."""
    if torch.equal(r, g):
        return LeafResult(True)
    src = nx.dense(source).to(r.device)
    if dim is None or src.dim() == 0:
        src, ri, gi, d = src.reshape(-1), r.reshape(-1), g.reshape(-1), 0
    else:
        d = dim % src.dim()
        ri, gi = r, g
        if r.dim() == src.dim() - 1:
            ri, gi = r.unsqueeze(d), g.unsqueeze(d)
    ri, gi = ri.to(torch.int64), gi.to(torch.int64)
    n = src.size(d)
    fits = ri.dim() == src.dim() and all(ri.size(k) <= src.size(k) for k in range(src.dim()) if k != d)
    if not fits or bool(((ri < 0) | (ri >= n)).any()):
        res = judge_exact(r, g, what)
        return dataclasses.replace(res, detail=res.detail + " (index_info did not fit; compared exactly)")
    sub = src.narrow(d, 0, src.size(d))
    for k in range(src.dim()):  # the part of the source the indices cover (topk of a slice)
        if k != d and ri.size(k) < src.size(k):
            sub = sub.narrow(k, 0, ri.size(k))
    x = IndexLeaf(ri, gi, sub, d, hint, what)
    res = apply(INDEX, x)
    bad = res.charges["index.differs"]
    if not bool(bad.any()):
        return LeafResult(True, 0.0, 0.0, notes=res.notes, rules=res.counts)
    if x.broken:
        return LeafResult(False, float(n) if bool(x.out_of_range.any()) else 0.0, 0.0,
                          f"{what}: {res.reason('index.differs', int(bad.sum()))}", rules=res.counts)
    p = first_true(bad)
    rv, gv = x.selected()
    return LeafResult(
        False, float((ri != gi).sum()), 0.0,
        f"{what}: selected values differ along dim {d} at {int(bad.sum())} of {ri.numel()} indices, first at "
        f"{index_str(p, tuple(ri.shape))}: eager index {int(ri.reshape(-1)[p])} -> {rv.reshape(-1)[p].item()}, "
        f"compiled index {int(gi.reshape(-1)[p])} -> {gv.reshape(-1)[p].item()} (an exact tie, or a near tie within "
        f"{nx.NEAR_TIE_ULPS:g} eps of the row's largest magnitude of like size, passes)",
        rules=res.counts,
    )


@dataclass(frozen=True)
class IndexLeaf:
    """An index leaf as the INDEX rules see it: eager's and compiled's indices along dim `d` of `sub`, the part
    of eager's source they cover."""

    ri: torch.Tensor
    gi: torch.Tensor
    sub: torch.Tensor
    d: int
    hint: torch.dtype | None
    what: str

    def selected(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.sub.gather(self.d, self.ri), self.sub.gather(self.d, self.gi)

    @functools.cached_property
    def out_of_range(self) -> torch.Tensor:
        """The compiled indices outside [0, n) of dim d."""
        return (self.gi < 0) | (self.gi >= self.sub.size(self.d))

    @functools.cached_property
    def repeats(self) -> bool:
        """Whether compiled's indices repeat along dim d where eager's do not (topk, sort)."""
        if self.gi.size(self.d) <= 1:
            return False

        def rep(t: torch.Tensor) -> bool:
            s = t.sort(dim=self.d).values
            n = s.size(self.d)
            return bool((s.narrow(self.d, 1, n - 1) == s.narrow(self.d, 0, n - 1)).any())
        return rep(self.gi) and not rep(self.ri)

    @property
    def broken(self) -> bool:
        """Whether compiled's indices select no values to weigh: out of range, or repeating along dim."""
        return bool(self.out_of_range.any()) or self.repeats


@behaviour("index.differs")
def index_differs(x: IndexLeaf, _pending) -> Hit:
    if bool(x.out_of_range.any()):
        p = first_true(x.out_of_range)
        return Hit(x.out_of_range, lambda n: f"compiled index {int(x.gi.reshape(-1)[p])} out of range "
                                             f"[0, {x.sub.size(x.d)}) at {index_str(p, tuple(x.gi.shape))}")
    if x.repeats:
        return Hit(x.ri != x.gi, lambda n: f"compiled indices repeat along dim {x.d}")
    return Hit(x.ri != x.gi, lambda n: "selected values differ")


def _abs64(t: torch.Tensor) -> torch.Tensor:
    return (t.abs() if t.is_complex() else t).to(torch.float64).abs()


@behaviour("index.tie")
def index_tie(x: IndexLeaf, pending: torch.Tensor) -> Hit | None:
    if x.broken:  # no values selected to weigh
        return None
    rv, gv = x.selected()
    ok = nx.equal_nan(rv, gv)
    if rv.is_floating_point() or rv.is_complex():
        # the scale of the row's rounding: its largest magnitude among the peers of the values selected (at most
        # PEER_RANGE times larger): a masked -1e9 beside logits of 1 says nothing of how the logits round
        sub = x.sub
        a = nx.as_real64(sub) if not sub.is_complex() else sub.abs().to(torch.float64)
        fin = torch.where(torch.isfinite(a), a.abs(), torch.zeros_like(a))
        own = torch.maximum(_abs64(rv), _abs64(gv))
        own = torch.where(torch.isfinite(own), own, torch.zeros_like(own))
        scale = torch.zeros_like(own)
        if fin.numel():
            for k in range(rv.size(x.d)):  # each selected position against its row
                lim = own.narrow(x.d, k, 1) * nx.PEER_RANGE
                peers = torch.where(fin <= lim, fin, torch.zeros_like(fin)).amax(dim=x.d, keepdim=True)
                scale.narrow(x.d, k, 1).copy_(peers)
        dt = nx.tol_dtype(sub.dtype, x.hint)
        near = (rv - gv).abs().to(torch.float64) <= nx.NEAR_TIE_ULPS * nx.eps(dt) * scale
        ok = ok | near
    return Hit(pending & ok, lambda n: f"{x.what}: {n} tied indices differ, the values they select agree")

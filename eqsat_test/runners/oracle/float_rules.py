"""The behaviour of the oracle's rules on floating leaves (rules.py's FLOAT scope: rules 1, 2, 3, 8), per element, and the detail of a failing leaf."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.engine import Applied, Hit, apply, behaviour
from eqsat_test.runners.oracle.exact import LeafResult, failing_of, first_true, fmt, index_str
from eqsat_test.runners.oracle.rules import FLOAT
from eqsat_test.runners.oracle.runs import EdgeOfRange, LeafRuns, RoundingRuns, flat

# the convicting rules whose elements fail by kind (NaN/inf), not by number
_KIND_CHARGES = ("kind.special", "kind.eager-right-overflow", "finite.non-finite")


@dataclass(frozen=True)
class FloatLeaf:
    """One floating leaf as its rules see it: float64 tensors of one shape (complex as (re, im) pairs) and the
    facts every rule shares, computed once."""

    e: torch.Tensor  # eager
    c: torch.Tensor  # compiled
    f: torch.Tensor  # the fp64 run, or e where there is none
    given: bool  # whether there is an fp64 run
    dt: torch.dtype  # D: the tolerance dtype
    what: str  # the leaf's description in notes and details
    shape: tuple[int, ...]
    extreme: bool  # the inputs hold values near D's range (a special set)
    rounding: RoundingRuns | None  # the fp64 runs under other roundings (None: not made)
    marks: torch.Tensor | None  # rule 8's marks (runs.LeafRuns.beyond) where there is an fp64 run
    reference: bool  # an independent reference (rule 6): not a float64 leaf equal to its fp64 run
    independent: bool  # an fp64 run that can say whose NaN/inf is right (rule 3)
    why_not: str  # why there is no independent run, for notes
    fin_e: torch.Tensor
    fin_c: torch.Tensor
    fin_f: torch.Tensor
    nan_c: torch.Tensor
    nan_f: torch.Tensor
    e_is_f: torch.Tensor  # e has f's value or both are NaN
    marked: torch.Tensor | None  # depends on a value beyond acc(D)'s range in some order (rule 8: the fp64 run's marks)
    over: Callable[[], torch.Tensor | None]  # eager's own overflow (runs.overflow_of), made where a rule asks
    edge_of_range: Callable[[], EdgeOfRange | None]  # eager's partial results at the edge (runs.edge_of), likewise
    f_d: torch.Tensor  # f rounded to D: +-inf where it overflows D
    e_over: torch.Tensor  # e non-finite, f finite: eager overflowed
    e_right: torch.Tensor  # ... to the infinity f rounds to
    f_over: torch.Tensor  # f finite beyond D's range
    bnd: nx.Bound  # rule 1's bound without S
    sens: tuple  # S's parts, cumulative: perturbed inputs, + Monte Carlo, + walk (None where absent)
    limit: torch.Tensor  # the bound with S

    @functools.cached_property
    def own_over(self) -> torch.Tensor:
        """Where the element depends on an intermediate eager itself overflowed (all False where none is known)."""
        m = self.over()
        return m.reshape(self.e.shape) if m is not None else torch.zeros_like(self.fin_e)

    @functools.cached_property
    def edge(self) -> EdgeOfRange | None:
        """What another order of eager's own partial results at the edge of the range can give here (None: none
        reach it)."""
        ed = self.edge_of_range()
        return ed.map(lambda m: m.reshape(self.e.shape)) if ed is not None else None

    def within(self, limit: torch.Tensor) -> torch.Tensor:
        return (self.c - self.f).abs() <= limit

    def widened(self, s: torch.Tensor) -> torch.Tensor:
        return self.bnd.bound + nx.SENS_MULT * s


def float_leaf(e: torch.Tensor, c: torch.Tensor, dt: torch.dtype, what: str, shape: tuple[int, ...], extreme: bool,
               runs: LeafRuns, low: torch.dtype | None, over: Callable[[], torch.Tensor | None] | None = None,
               edge: Callable[[], EdgeOfRange | None] | None = None) -> FloatLeaf:
    """The context of the FLOAT rules: eager and compiled as float64 tensors of one shape (complex as (re, im)
    pairs), D = dt, the fp64 runs' leaves (float64 tensors of that shape, or None), the coarsest dtype the fp64
    run rounds its data to (`low`), a call that gives the elements that depend on eager's own overflow (`over`:
    a bool tensor of that shape, or None where none is known; only a rule that asks makes it), and one that gives
    where they depend on eager's own partial results at the edge of the range (`edge`: a runs.EdgeOfRange of that
    shape, or None)."""
    f = runs.fp64
    given = f is not None
    rounding = runs.rounding
    parts: list[torch.Tensor | None] = [nx.sensitivity(f, flat(runs.perturbed), dt, nx.sens_delta(low))]
    # the Monte Carlo runs: how far f moves under another rounding of the intermediates, weighed like
    # rounding (it is the roundings' own effect), or its quantile over the peers where larger
    s = nx.sensitivity(f, flat(rounding.noise), dt, nx.eps(dt), rounded=True) if rounding is not None else None
    parts.append(None if s is None else nx.over_peers(f, s) * nx.ROUNDING_RUN_WEIGHT)
    # the reductions' partial sums rounded in another order: at the element itself
    s = None
    if rounding is not None and rounding.walk is not None:
        half = list(rounding.walk_half.both()) if rounding.walk_half is not None else []
        s = nx.walk_sensitivity(f, list(rounding.walk.both()), half, dt)
    parts.append(None if s is None else s * nx.ROUNDING_RUN_WEIGHT)
    cumulative, total = [], None
    for p in parts:
        if p is not None:
            total = p if total is None else total + p
        cumulative.append(None if p is None else total)
    # a float64 leaf whose fp64 run equals eager has no independent reference (rule 6)
    reference = given and not (dt == torch.float64 and bool(nx.equal_nan(e, f).all()))
    # an fp64 run that rounds to D (or coarser) inside, x.bfloat16(), overflows where eager does: it still
    # tracks the program's roundings (rule 1), but cannot say whose NaN/inf is right (nor a float64 leaf's
    # fp64 run, the CPU's on a GPU: it has float64's range and overflows where eager may)
    independent = reference and dt != torch.float64 and not (low is not None and nx.eps(low) >= nx.eps(dt))
    why_not = "with no independent fp64 run" if not reference else \
        "with an fp64 run no wider than float64" if dt == torch.float64 else \
        f"with an fp64 run that rounds to {str(low)[6:]} inside"
    if f is None:
        f = e
    fin_e, fin_c, fin_f = torch.isfinite(e), torch.isfinite(c), torch.isfinite(f)
    nan_e, nan_c, nan_f = torch.isnan(e), torch.isnan(c), torch.isnan(f)
    marks = runs.beyond if given else None
    marked = (marks >= 1) if marks is not None else None
    f_d = f.to(dt).to(torch.float64)
    e_over = ~fin_e & fin_f
    fin_ef = fin_e & fin_f
    stat = fin_ef & ~((e == 0) & (f == 0))
    f0 = torch.where(fin_f, f, torch.zeros_like(f))
    bnd = nx.bound(torch.where(fin_ef, e, f0), f0, stat, dt, reference)
    return FloatLeaf(
        e=e, c=c, f=f, given=given, dt=dt, what=what, shape=shape, extreme=extreme, rounding=rounding, marks=marks,
        reference=reference, independent=independent, why_not=why_not, fin_e=fin_e, fin_c=fin_c, fin_f=fin_f,
        nan_c=nan_c, nan_f=nan_f, e_is_f=(e == f) | (nan_e & nan_f), marked=marked,
        over=over if over is not None else (lambda: None), edge_of_range=edge if edge is not None else (lambda: None),
        f_d=f_d, e_over=e_over, e_right=e_over & (e == f_d),
        f_over=fin_f & ~torch.isfinite(f_d), bnd=bnd, sens=tuple(cumulative),
        limit=bnd.bound if total is None else bnd.bound + nx.SENS_MULT * total)


def _d(x: torch.dtype) -> str:
    return str(x)[6:]


# ----------------------------------------------------------------------------------------------
# rules 2, 3 and 8: NaN and infinities


@behaviour("kind.special")
def kind_special(x: FloatLeaf, _pending) -> Hit:
    same_e = (x.c == x.e) | (x.nan_c & torch.isnan(x.e)) | (x.fin_c & x.fin_e)
    same_f = (x.c == x.f) | (x.nan_c & x.nan_f)
    return Hit(~x.fin_f & torch.where(x.e_is_f, ~same_f, ~(same_f | same_e)),
               lambda n: "compiled disagrees in kind with both eager and fp64")


@behaviour("kind.no-independent-run")
def kind_no_independent_run(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.independent:
        return None
    big = x.c.abs() >= math.sqrt(nx.max_finite(x.dt))
    return Hit(pending & x.own_over & ((x.fin_c & (big | x.extreme)) | (~x.fin_c & x.extreme)),
               lambda n: f"{x.what}: compiled finite (or another NaN/inf) where eager is non-finite of its own overflow, "
                         f"{x.why_not}, at {n} elements (beyond sqrt of {_d(x.dt)}'s range, or special inputs): not judged")


@behaviour("kind.nan-beyond-float64")
def kind_nan_beyond_float64(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.marked is None:
        return None
    return Hit(pending & x.nan_f & (x.marks >= 2),
               lambda n: f"{x.what}: compiled differs from a NaN fp64 at {n} elements whose NaN depends on an "
                         f"intermediate beyond the range of float64 (the fp64 run's own overflow) or on a conversion "
                         f"of NaN/inf to an integer (undefined): not judged")


@behaviour("kind.eager-right-overflow")
def kind_eager_right_overflow(x: FloatLeaf, _pending) -> Hit:
    return Hit(x.e_right & ~x.fin_c & (x.c != x.e), lambda n: "compiled disagrees in kind with both eager and fp64")


@behaviour("kind.overflow-order-special")
def kind_overflow_order_special(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if not x.extreme:
        return None
    return Hit(pending & x.nan_c & torch.isinf(x.e) & (x.e_is_f | x.e_right) & x.own_over,
               lambda n: f"{x.what}: compiled NaN where eager is the infinity fp64 is or rounds to, of its own overflow, "
                         f"at {n} elements, inputs near the range of {_d(x.dt)}: an overflow in another order, not judged")


@behaviour("kind.nan-beyond-range")
def kind_nan_beyond_range(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.marked is None:
        return None
    return Hit(pending & x.nan_c & torch.isinf(x.f) & x.marked,
               lambda n: f"{x.what}: compiled NaN where fp64 is infinite at {n} elements whose finite partial results "
                         f"pass the range of {_d(nx.acc_dtype(x.dt))} in some order (0 · inf, inf - inf): not judged")


@behaviour("kind.other-rounding")
def kind_other_rounding(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.rounding is None:
        return None
    other = torch.zeros_like(pending)
    kind_f = _kind(x.f)
    for m in x.rounding.all():
        if m is not None:
            other |= ~torch.isfinite(m) & ((m == x.c) | (torch.isnan(m) & x.nan_c))
            other |= _kind(m) != kind_f  # the element's kind turns on its roundings (a cancellation's sign)
    return Hit(pending & ~x.fin_c & other,
               lambda n: f"{x.what}: compiled NaN/inf of another kind than fp64's at {n} elements where an fp64 run "
                         f"under another rounding of the intermediates gives it, or gives another kind than fp64's: "
                         f"not judged")


def _kind(t: torch.Tensor) -> torch.Tensor:
    """Each element's kind: 0 finite, 1 +inf, 2 -inf, 3 NaN."""
    return torch.where(torch.isnan(t), 3, torch.where(t == math.inf, 1, torch.where(t == -math.inf, 2, 0)))


@behaviour("finite.non-finite")
def finite_non_finite(x: FloatLeaf, _pending) -> Hit:
    reason = "compiled is non-finite where eager and fp64 are finite" if x.given else \
        "compiled is non-finite where eager is finite; no fp64 reference"
    return Hit(x.fin_e & x.fin_f & ~x.fin_c & ~(x.f_over & (x.c == x.f_d)), lambda n: reason)


@behaviour("finite.overflow-order")
def finite_overflow_order(x: FloatLeaf, pending: torch.Tensor) -> Hit:
    near = torch.maximum(x.e.abs(), x.f.abs()) * nx.OVERFLOW_MARGIN >= nx.max_finite(x.dt)
    # an infinity of the value's sign (a NaN needs infinities of both signs: eager's own overflow, finite.beyond-range)
    inf = torch.isinf(x.c) & ((torch.sign(x.c) == torch.sign(x.e)) | (torch.sign(x.c) == torch.sign(x.f)))
    return Hit(pending & near & inf,
               lambda n: f"{x.what}: compiled infinite where eager and fp64 are finite at {n} elements within "
                         f"{nx.OVERFLOW_MARGIN:g}x of the range of {_d(x.dt)}: an overflow in another order, not judged")


@behaviour("finite.beyond-range")
def finite_beyond_range(x: FloatLeaf, pending: torch.Tensor) -> Hit:
    return Hit(pending & x.own_over,
               lambda n: f"{x.what}: compiled non-finite where eager and fp64 are finite at {n} elements that depend on "
                         f"an intermediate eager itself overflowed (an infinity of finite operands, or NaN/inf to an "
                         f"integer): an overflow in another order, not judged")


@behaviour("finite.edge-of-range")
def finite_edge_of_range(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.edge is None:
        return None
    return Hit(pending & x.edge.admits(x.c),
               lambda n: f"{x.what}: compiled non-finite where eager and fp64 are finite at {n} elements that depend on "
                         f"partial results of eager's own reductions or scans within {nx.EDGE_FACTOR:g}x of the range "
                         f"in some order of their terms: an overflow in another order, not judged")


@behaviour("eager.overflow")
def eager_overflow(x: FloatLeaf, _pending) -> Hit:
    return Hit(x.e_over & ~x.e_right,
               lambda n: f"{x.what}: eager non-finite where fp64 is finite (overflow) at {n} elements: both wrong, "
                         f"judged by kind only, which any value passes")


# ----------------------------------------------------------------------------------------------
# rule 1's bound


@behaviour("finite.bound")
def finite_bound(x: FloatLeaf, _pending) -> Hit:
    # also for a finite c where eager overflowed to the infinity f rounds to
    return Hit(x.fin_c & x.fin_f & (x.fin_e | x.e_right) & ~x.within(x.bnd.bound))  # (its detail: _failure)


def _conditioned(k: int):
    def rule(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
        if x.sens[k] is None:
            return None
        return Hit(pending & x.within(x.widened(x.sens[k])))  # a wider bound: no note
    return rule


behaviour("bound.perturbed-inputs")(_conditioned(0))
behaviour("bound.monte-carlo")(_conditioned(1))
behaviour("bound.walk")(_conditioned(2))


def _within_run(x: FloatLeaf, runs: list, anywhere: bool) -> torch.Tensor:
    """Where c lies within the bound of one of `runs` (its relative parts at that run's |value|): any of them
    (`anywhere`), or a run that itself jumps beyond the bound from f (a step its rounding crosses)."""
    stepped = torch.zeros_like(x.fin_c)
    acc = nx.eps(nx.acc_dtype(x.dt))
    for m in runs:
        if m is not None:
            more = (m.abs() - x.f.abs()).clamp(min=0)  # the relative parts for m's excess over |f|
            near_m = x.limit + (nx.ROUND_ULPS * nx.eps(x.dt) + x.bnd.k.reshape(x.shape) * acc) * more
            jumps = torch.ones_like(stepped) if anywhere else ((m - x.f).abs() > x.limit)
            stepped |= torch.isfinite(m) & jumps & ((x.c - m).abs() <= near_m)
    return stepped


def _other_run_note(x: FloatLeaf):
    return lambda n: (f"{x.what}: compiled beyond the bound at {n} elements where an fp64 run under another rounding of "
                      f"the intermediates (a step it crosses), with subnormals flushed or with a cast's precision kept "
                      f"gives it: not judged")


@behaviour("bound.rounding-step")
def bound_rounding_step(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.rounding is None:
        return None
    return Hit(pending & _within_run(x, x.rounding.rounded(), anywhere=False), _other_run_note(x))


@behaviour("bound.flushed-subnormals")
def bound_flushed_subnormals(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.rounding is None:
        return None
    return Hit(pending & _within_run(x, [x.rounding.flushed], anywhere=True), _other_run_note(x))


@behaviour("bound.kept-precision")
def bound_kept_precision(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.rounding is None:
        return None
    return Hit(pending & _within_run(x, [x.rounding.kept_precision], anywhere=True), _other_run_note(x))


@behaviour("bound.beyond-range")
def bound_beyond_range(x: FloatLeaf, pending: torch.Tensor) -> Hit:
    return Hit(pending & x.own_over,
               lambda n: f"{x.what}: compiled beyond the bound at {n} elements that depend on an intermediate eager "
                         f"itself overflowed (an infinity of finite operands, NaN/inf to an integer, the sign of a NaN): not judged")


@behaviour("bound.edge-of-range")
def bound_edge_of_range(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.edge is None:
        return None
    return Hit(pending & x.edge.after,
               lambda n: f"{x.what}: compiled beyond the bound at {n} elements that depend, through a further op, on "
                         f"partial results of eager's own reductions or scans within {nx.EDGE_FACTOR:g}x of the range "
                         f"in some order of their terms (or a product's below the smallest normal number): an overflow "
                         f"in another order (or an underflow), not judged")


@behaviour("product.underflow-order")
def product_underflow_order(x: FloatLeaf, pending: torch.Tensor) -> Hit | None:
    if x.edge is None or x.edge.under is None:
        return None
    return Hit(pending & x.edge.admits_under(x.c),
               lambda n: f"{x.what}: compiled differs from eager at {n} elements of a product whose partial products "
                         f"fall below the smallest normal number of {_d(nx.acc_dtype(x.dt))} in some order of its "
                         f"factors, and is what such an order gives (0, or the exact product within the rounding "
                         f"of subnormal partials): an underflow in another order, not judged")


@behaviour("note.signed-zero")
def note_signed_zero(x: FloatLeaf, pending: torch.Tensor | None) -> Hit | None:
    if pending is not None and bool(pending.any()):
        return None
    zs = (x.c == 0) & (x.e == 0) & (x.f == 0) & (torch.signbit(x.e) == torch.signbit(x.f)) \
        & (torch.signbit(x.c) != torch.signbit(x.e))

    def note(n: int) -> str:
        p = first_true(zs)
        return (f"{x.what}: signed zero differs at {n} elements, first at {index_str(p, x.shape)} (eager and fp64 "
                f"{fmt(float(x.e.reshape(-1)[p]))}, compiled {fmt(float(x.c.reshape(-1)[p]))})")
    return Hit(zs, note)


# ----------------------------------------------------------------------------------------------
# the leaf


def judge_float(x: FloatLeaf) -> LeafResult:
    """The FLOAT rules on one leaf: a pass with the notes, or a failure at the first element still charged."""
    abs_err, rel_err = nx.max_errors(x.e, x.c)
    out = apply(FLOAT, x)
    bad = out.pending()
    if bad is None or not bool(bad.any()):
        return LeafResult(True, abs_err, rel_err, notes=out.notes, rules=out.counts)
    return LeafResult(False, *_failure(x, out, bad, abs_err, rel_err), rules=out.counts, failing=failing_of(bad))


def _failure(x: FloatLeaf, out: Applied, bad: torch.Tensor, abs_err: float, rel_err: float) -> tuple[float, float, str]:
    """(max abs err, max rel err, detail) of a failing leaf: its first failing element, with the rule it broke."""
    kind_bad = out.pending(_KIND_CHARGES)
    num_bad = out.pending(("finite.bound",))
    p = first_true(bad)
    ev_, cv, fv = (float(t.reshape(-1)[p]) for t in (x.e, x.c, x.f))
    counts = [f"NaN/Inf positions differ at {int(kind_bad.sum())}"] if kind_bad is not None and bool(kind_bad.any()) else []
    if num_bad is not None and bool(num_bad.any()):
        counts.append(f"{int(num_bad.sum())} exceed the fp64 bound")
    head = (f"{x.what}: {' and '.join(counts)} of {x.e.numel()} elements, first at {index_str(p, x.shape)}: "
            f"eager {fmt(ev_)}, compiled {fmt(cv)}, fp64 {fmt(fv) if x.given else '(none)'}")
    rule = out.convicting(p)
    if rule != "finite.bound":
        return math.inf, math.inf, f"{head} ({out.reasons[rule](1)})"
    dt, bnd = x.dt, x.bnd
    b, acc, d = float(x.limit.reshape(-1)[p]), _d(nx.acc_dtype(dt)), _d(dt)
    total = next((s for s in reversed(x.sens) if s is not None), None)
    sp = 0.0 if total is None else float(total.reshape(-1)[p])
    cond = f" + {nx.SENS_MULT:g} x S {fmt(sp)} (fp64's change when the inputs" \
           f"{' and intermediates' if x.rounding is not None else ''} move by one rounding of {d})" if sp else ""
    mk, n = f"{fmt(float(bnd.k[p]))} eps({acc})", int(bnd.peers[p])
    if x.reference:
        why = (f"|compiled - fp64| = {fmt(abs(cv - fv))} > {fmt(b)} = {fmt(float(bnd.mult[p]))} x eager's error "
               f"{fmt(float(bnd.yard[p]))} (beyond rounding; here, or the q{nx.YARD_QUANTILE * 100:g} of {n} peers) + "
               f"{nx.ROUND_ULPS:g} (ulp({d}, fp64) + eps({d}) typ) + {mk} (|fp64| + typ){cond}, typ = the peers' "
               f"median |fp64| {fmt(float(bnd.typ[p]))}")
    else:
        why = (f"no independent fp64 reference: |compiled - eager| = {fmt(abs(cv - ev_))} > {fmt(b)} = "
               f"{nx.ROUND_ULPS:g} (ulp({d}, eager) + eps({d}) typ) + {mk} (|eager| + typ){cond}, typ = the peers' "
               f"median |eager| {fmt(float(bnd.typ[p]))}")
    return abs_err, rel_err, f"{head} ({why})"

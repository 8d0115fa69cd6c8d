"""The oracle: judge a program's compiled output against its eager output, per element of every leaf, with the program's fp64 run as the judge and eager's error as the yardstick.

The rules are a table (rules.py: id, what each convicts or clears, why, the PyTorch behaviour it
follows, its test; docs/oracle.md in prose), applied by scope (engine.py): the whole output first
(output.nondeterministic, output.structure), then each leaf: a leaf whose two eager runs differ
(varies.*), floating leaves per element (float_rules.py: kind.*, finite.*, eager.overflow, bound.*,
note.signed-zero), integer and bool leaves exactly (exact.*), index leaves by the values they select
(index.*), tensor leaves' strides (note.strides), and at a lenient sweep point a failing leaf again
(lenient.py: lenient.wider-run). A verdict lists per leaf which rules fired and how many elements
each convicted, cleared or noted (Verdict.rules). e = eager, c = compiled, f = the program run eagerly
with every floating input in float64; D = the output's dtype (or dtype_hint, if less precise).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.engine import Hit, apply, behaviour
from eqsat_test.runners.oracle.exact import (
    LeafResult,
    failing_of,
    first_true,
    fmt,
    index_str,
    judge_exact,
    judge_index,
    judge_value,
)
from eqsat_test.runners.oracle.float_rules import float_leaf, judge_float
from eqsat_test.runners.oracle.lenient import judge_lenient
from eqsat_test.runners.oracle.numerics import leaves, to_fp64, tolerance  # noqa: F401 (re-exported)
from eqsat_test.runners.oracle.rules import OUTPUT, TENSOR, VARIES
from eqsat_test.runners.oracle.runs import (
    Antithetic,
    EagerOrigin,
    EdgeOfRange,
    LeafRuns,
    RoundingRuns,
    edge_of,
    overflow_of,
)
from eqsat_test.runners.oracle.verdict import (
    MATCH,
    MISMATCH,
    NONDETERMINISTIC,
    STRUCTURE_MISMATCH,
    LeafRules,
    RuleCount,
    Verdict,
)

__all__ = [
    "Verdict", "RuleCount", "LeafRules", "judge", "compare_eager", "leaves", "to_fp64", "tolerance",
    "MATCH", "MISMATCH", "NONDETERMINISTIC", "STRUCTURE_MISMATCH",
]


# ----------------------------------------------------------------------------------------------
# structure


def _container_mismatch(r: Any, g: Any) -> str | None:
    if isinstance(r, Mapping):
        if not isinstance(g, Mapping):
            return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
        if set(r.keys()) != set(g.keys()):
            only_r = [k for k in r.keys() if k not in g]
            only_g = [k for k in g.keys() if k not in r]
            return f"keys differ: only eager {only_r}, only compiled {only_g}"
        return None
    if type(r) is not type(g):
        return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
    if isinstance(r, (list, tuple)) and len(r) != len(g):
        return f"length {len(r)} vs {len(g)}"
    return None


def _leaf_mismatch(r: Any, g: Any) -> str | None:
    if isinstance(r, torch.Tensor) or isinstance(g, torch.Tensor):
        if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)):
            return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
        if tuple(r.shape) != tuple(g.shape):
            return f"shape {tuple(r.shape)} vs {tuple(g.shape)}"
        if r.dtype != g.dtype:
            return f"dtype {r.dtype} vs {g.dtype}"
        return None
    rk, gk = nx.scalar_kind(r), nx.scalar_kind(g)
    if (rk or gk) and rk != gk:
        return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
    if (r is None) != (g is None):
        return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
    return None


def _pair(r: Any, g: Any, path: str, out: list) -> tuple[str, str] | None:
    """Pair up the leaves of r and g into out; return (path, why) at the first structural difference."""
    r, g = nx.normalize_leaf(r), nx.normalize_leaf(g)
    kids = nx.children(r)
    if kids is None:
        if nx.children(g) is not None:
            return path, f"type {nx.type_name(r)} vs {nx.type_name(g)}"
        why = _leaf_mismatch(r, g)
        if why:
            return path, why
        out.append((path, r, g))
        return None
    why = _container_mismatch(r, g)
    if why:
        return path, why
    gkids = [g[k] for k in r.keys()] if isinstance(r, Mapping) else [c for _, c in nx.children(g)]
    for (suffix, rc), gc in zip(kids, gkids):
        bad = _pair(rc, gc, path + suffix, out)
        if bad:
            return bad
    return None


# ----------------------------------------------------------------------------------------------
# leaves


def _judge_float(e: torch.Tensor, c: torch.Tensor, dt: torch.dtype, what: str, shape: tuple[int, ...],
                 extreme: bool, runs: LeafRuns, low: torch.dtype | None, over=None, edge=None) -> LeafResult:
    """A floating leaf as float64 tensors of one shape (complex as (re, im) pairs), dt its tolerance dtype, `over`
    a call that gives eager's own overflow (runs.overflow_of, that shape), `edge` one that gives eager's partial
    results at the edge of the range (runs.edge_of, that shape): the FLOAT rules (float_rules.py), unless compiled
    equals eager bitwise (which passes every rule)."""
    if bool((e.view(torch.int64) == c.view(torch.int64)).all()):
        return LeafResult(True)
    return judge_float(float_leaf(e, c, dt, what, shape, extreme, runs, low, over, edge))


def _real_mask(m: torch.Tensor | None, r: torch.Tensor) -> torch.Tensor | None:
    """An element mask of tensor r as its float64 values are judged (complex: each element's (re, im) pair)."""
    if not isinstance(m, torch.Tensor) or tuple(m.shape) != tuple(r.shape):
        return None
    m = m.to(r.device)
    if r.is_complex():
        return m.unsqueeze(-1).expand(*m.shape, 2).reshape(*m.shape[:-1], -1) if m.dim() else m.expand(2)
    return m


def _real_edge(ed: EdgeOfRange | None, r: torch.Tensor) -> EdgeOfRange | None:
    """An EdgeOfRange of tensor r as its float64 values are judged (_real_mask of each mask)."""
    if ed is None:
        return None
    plus, minus, nan, after = (_real_mask(m, r) for m in (ed.plus, ed.minus, ed.nan, ed.after))
    if plus is None or minus is None or nan is None or after is None:
        return None
    if r.is_complex() or ed.under is None:  # (a product's span: of real products only)
        return EdgeOfRange(plus, minus, nan, after)
    return EdgeOfRange(plus, minus, nan, after, _real_mask(ed.under, r), _real_mask(ed.low, r), _real_mask(ed.high, r))


@dataclass(frozen=True)
class TensorPair:
    """A tensor leaf as the TENSOR rules see it: eager's and compiled's, as returned (layout, strides)."""

    r: torch.Tensor
    g: torch.Tensor
    what: str


@behaviour("note.strides")
def note_strides(x: TensorPair, _pending) -> Hit | None:
    r, g = x.r, x.g
    if r.layout != torch.strided or g.layout != torch.strided or r.numel() <= 1:
        return None
    rs = [s for s, n in zip(r.stride(), r.shape) if n > 1]
    gs = [s for s, n in zip(g.stride(), g.shape) if n > 1]
    if rs == gs:
        return None
    return Hit(torch.ones((), dtype=torch.bool), lambda n: f"{x.what}: strides differ (eager {tuple(r.stride())}, "
                                                           f"compiled {tuple(g.stride())}; values agree)")


def _fp64_leaf(f: Any, r: torch.Tensor) -> torch.Tensor | None:
    """The fp64 run's leaf, when it is a floating tensor of r's shape at least as precise as r."""
    if isinstance(f, torch.Tensor) and tuple(f.shape) == tuple(r.shape) and (f.is_floating_point() or f.is_complex()) \
            and f.is_complex() == r.is_complex():
        fd = nx.dense(f)
        if nx.eps(fd.dtype) <= nx.eps(r.dtype):
            return nx.as_real64(fd.to(r.device))
    if nx.scalar_kind(f) in ("float", "int") and r.numel() == 1 and not r.is_complex():
        return torch.tensor(float(f), dtype=torch.float64).reshape(r.shape)
    return None


def _exact_beyond_mask(fb: Any, r: torch.Tensor, origin: EagerOrigin | None) -> torch.Tensor | None:
    """Rule 8 for an integer or bool leaf: where eager itself overflowed or converted NaN/inf to an integer
    (origin.overflow), or where the BeyondRange runs' marks (a float64 leaf of r's shape) say the fp64 run
    did (2: beyond float64's range too, or such a conversion): no value there is a reference."""
    m = None
    if isinstance(fb, torch.Tensor) and fb.is_floating_point() and tuple(fb.shape) == tuple(r.shape):
        m = (fb >= 2).to(r.device)
    own = _real_mask(overflow_of(origin), r)
    if own is not None:
        m = own if m is None else m | own
    return m


def _judge_leaf(path: str, r: Any, g: Any, hint: torch.dtype | None, index: tuple | None, extreme: bool,
                runs: LeafRuns, low: torch.dtype | None, origin: EagerOrigin | None = None) -> LeafResult:
    """One leaf against its eager value; `runs`: the fp64 runs' leaves at this path, as they are; `origin`: what
    eager's own run says of it (None: not known; the program's coarsest dtype `hint` applies then)."""
    what = path or "output"
    kind = nx.scalar_kind(r)
    f = runs.fp64
    if origin is not None:  # the dtypes this leaf was computed in, not the whole program's
        hint = origin.dtype
    if kind in ("bool", "int"):
        if r == g:
            return LeafResult(True)
        d = float(abs(int(r) - int(g)))
        return LeafResult(False, d, d / abs(r) if r else 0.0, f"{what}: {kind} {r} vs {g} (exact)",
                          rules=judge_value(what, False))
    if kind in ("float", "complex"):  # Python floats are doubles: judged as 0-d float64, fp64 as reference
        dt = nx.tol_dtype(torch.float64, hint)
        to_t = lambda x: nx.as_real64(torch.tensor(x, dtype=torch.complex128 if isinstance(x, complex)  # noqa: E731
                                                     else torch.float64))
        rt, gt = to_t(r), to_t(g)
        ft = None
        if isinstance(f, torch.Tensor) and f.numel() == 1 and (f.is_floating_point() or f.is_complex()):
            ft = nx.as_real64(nx.dense(f).cpu().reshape(()).to(torch.complex128 if kind == "complex" else torch.float64))
        elif nx.scalar_kind(f) in ("float", "complex", "int"):
            ft = to_t(complex(f) if kind == "complex" else float(f))
        if ft is not None and ft.shape != rt.shape:
            ft = None
        return _judge_float(rt, gt, dt, f"{what} (python {kind})", tuple(rt.shape), extreme, LeafRuns(fp64=ft), low)
    if isinstance(r, torch.Tensor):
        strides = apply(TENSOR, TensorPair(r, g, what))
        r, g = nx.dense(r), nx.dense(g).to(r.device)
        desc = f"{what} {str(r.dtype).removeprefix('torch.')}{list(r.shape)}"
        if index is not None and not (r.is_floating_point() or r.is_complex() or r.dtype == torch.bool):
            source, dim = index
            res = judge_index(r, g, source, dim, hint, desc + " (indices)")
        elif r.is_floating_point() or r.is_complex():
            e64 = nx.as_real64(r)
            leaf = lambda t: _fp64_leaf(t, r)  # noqa: E731
            rounding = runs.rounding.map(leaf) if runs.rounding is not None else None
            res = _judge_float(e64, nx.as_real64(g), nx.tol_dtype(r.dtype, hint), desc, tuple(e64.shape), extreme,
                               LeafRuns(leaf(f), tuple(p.map(leaf) for p in runs.perturbed), rounding,
                                        leaf(runs.beyond)), low, lambda: _real_mask(overflow_of(origin), r),
                               lambda: _real_edge(edge_of(origin), r))
        else:
            alts = runs.rounding.all() if runs.rounding is not None else []
            res = judge_exact(r, g, desc, [f, *alts], lambda: _exact_beyond_mask(runs.beyond, r, origin),
                              lambda: _real_edge(edge_of(origin), r))
        if strides.notes and res.ok:
            res.notes.extend(strides.notes)
            res.rules.extend(strides.counts)
        return res
    if r is None:
        return LeafResult(True)
    try:
        same = bool(r == g)
    except Exception:
        same = repr(r) == repr(g)
    if same:
        return LeafResult(True)
    return LeafResult(False, 0.0, 0.0, f"{what}: {nx.type_name(r)} {r!r} vs {g!r}", rules=judge_value(what, False))


@dataclass(frozen=True)
class Difference:
    """The first difference between two eager runs: its leaf, why, the largest errors between them, and the
    elements of that leaf that differ (a bool mask; 0-d for a value or a structure)."""

    path: str
    why: str
    abs_err: float
    rel_err: float
    mask: torch.Tensor


def _one() -> torch.Tensor:
    return torch.ones((), dtype=torch.bool)


def _bitwise_difference(ref: Any, ref2: Any, index_info: Mapping[str, tuple] | None) -> Difference | None:
    """The first difference between two eager runs, or None."""
    pairs: list = []
    bad = _pair(ref, ref2, "", pairs)
    if bad:
        return Difference(bad[0], f"structure varied between two eager runs: {bad[1]}", 0.0, 0.0, _one())
    first = None
    max_abs = max_rel = 0.0
    for path, a, b in pairs:
        what = path or "output"
        if isinstance(a, torch.Tensor):
            a, b = nx.dense(a), nx.dense(b).to(a.device)
            if index_info and path in index_info and not (a.is_floating_point() or a.is_complex()):
                res = judge_index(a, b, *index_info[path], torch.float64, what + " (indices)")
                if not res.ok and first is None:
                    first = (path, res.detail, a != b)
                continue
            eq = nx.equal_nan(a, b)
            if bool(eq.all()):  # (the usual case: no error to measure, a pass over a large leaf saved)
                continue
            if a.is_floating_point() or a.is_complex():
                e_abs, e_rel = nx.max_errors(nx.as_real64(a), nx.as_real64(b))
            elif a.dtype != torch.bool:
                e_abs, e_rel = nx.max_errors(a.to(torch.float64), b.to(torch.float64))
            else:
                e_abs = e_rel = 1.0
            max_abs, max_rel = max(max_abs, e_abs), max(max_rel, e_rel)
            if first is None:
                p = first_true(~eq)
                first = (path, f"{what}: eager run twice differs at {int((~eq).sum())} of {a.numel()} elements, "
                               f"first at {index_str(p, tuple(a.shape))} ({a.reshape(-1)[p].item()} vs "
                               f"{b.reshape(-1)[p].item()})", ~eq)
        else:
            same = (a == b) or (isinstance(a, float) and math.isnan(a) and isinstance(b, float) and math.isnan(b))
            if not same and first is None:
                first = (path, f"{what}: eager run twice differs ({a!r} vs {b!r})", _one())
    if first is None:
        return None
    return Difference(first[0], first[1], max_abs, max_rel, first[2])


@dataclass(frozen=True)
class OutputPair:
    """A whole output as the OUTPUT rules see it: the first difference between two eager runs (None: they agree,
    or there is no second run), whether the leaves that differ are known (the eager run's record, runs of one
    structure: then they are judged leaf by leaf, VARIES), and the first structural difference between eager's
    output and compiled's ((path, why), or None)."""

    diff: Difference | None
    by_leaf: bool
    structure: tuple[str, str] | None

    @property
    def aside(self) -> bool:
        """Whether the whole output is set aside, not judged."""
        return self.diff is not None and not self.by_leaf


@behaviour("output.nondeterministic")
def output_nondeterministic(x: OutputPair, _pending) -> Hit | None:
    if not x.aside:
        return None
    return Hit(x.diff.mask, lambda n: f"nondeterministic, not judged: {x.diff.why}")


@behaviour("output.structure")
def output_structure(x: OutputPair, _pending) -> Hit | None:
    if x.structure is None or x.aside:
        return None
    path, why = x.structure
    return Hit(_one(), lambda n: f"{path or 'output'}: structure differs: {why}")


@dataclass(frozen=True)
class VaryingLeaf:
    """A leaf of an output whose two eager runs differ, as the VARIES rules see it: eager's, compiled's, the
    second eager run's (None: the leaf depends on a random draw, or has no record), the fp64 run's, and the eager
    run's record of it."""

    path: str
    r: Any
    g: Any
    r2: Any
    f: Any
    origin: EagerOrigin | None

    @property
    def floating(self) -> bool:
        """Whether the leaf is judged by kind: a floating tensor without a random draw."""
        return self.r2 is not None and isinstance(self.r, torch.Tensor) and (self.r.is_floating_point()
                                                                            or self.r.is_complex())

    def real(self, t: Any) -> torch.Tensor:
        return nx.as_real64(nx.dense(t).to(self.r.device))


@behaviour("varies.non-finite")
def varies_non_finite(x: VaryingLeaf, _pending) -> Hit | None:
    if not x.floating:
        return None
    e, c, e2 = x.real(x.r), x.real(x.g), x.real(x.r2)
    fin = torch.isfinite(e) & torch.isfinite(e2) & ~torch.isfinite(c)
    f64 = _fp64_leaf(x.f, x.r)
    if f64 is not None:
        fin &= torch.isfinite(f64)
    return Hit(fin, lambda n: "compiled is non-finite where both eager runs (which differ elsewhere) and fp64 are "
                              "finite")


@behaviour("varies.own-overflow")
def varies_own_overflow(x: VaryingLeaf, pending: torch.Tensor) -> Hit:
    took = torch.zeros_like(pending)
    own = _real_mask(overflow_of(x.origin), x.r)
    if own is not None:
        took |= pending & own
    rest = pending & ~took
    edge = _real_edge(edge_of(x.origin), x.r) if bool(rest.any()) else None
    if edge is not None:  # an overflow of eager's own partial results at the edge, in another order
        took |= rest & edge.admits(x.real(x.g))
    return Hit(took)


@behaviour("varies.set-aside")
def varies_set_aside(x: VaryingLeaf, pending: torch.Tensor | None) -> Hit | None:
    if pending is not None and bool(pending.any()):  # judged by kind, and failing
        return None
    r, g = x.r, x.g
    if isinstance(r, torch.Tensor):
        return Hit(~nx.equal_nan(nx.dense(r), nx.dense(g).to(r.device)))
    same = r == g or (isinstance(r, float) and isinstance(g, float) and math.isnan(r) and math.isnan(g))
    return Hit(torch.tensor(not same))


# ----------------------------------------------------------------------------------------------
# public


def judge(ref: Any, got: Any, fp64: Any = None, *, ref2: Any = None, index_info: Mapping[str, tuple] | None = None,
          dtype_hint: Any = None, extreme_inputs: bool = False, fp64_perturbed: Any = None,
          fp64_low: Any = None, fp64_rounded: Any = None, fp64_beyond: Any = None,
          origins: Mapping[str, EagerOrigin] | None = None, lenient: tuple | None = None) -> Verdict:
    """Judge a program's compiled output `got` against its eager output `ref` (the rules: rules.py).

    fp64: the same program's eager output with floating inputs/parameters in float64 (None: no
    independent reference; compiled is compared with eager, rule 6). ref2: a second eager
    output; if it differs from ref (NaN == NaN) the verdict is "nondeterministic", ok=True, not
    judged. index_info: leaf path -> (eager source tensor, dim) for index outputs, judged by the
    values they select. dtype_hint: the program's lowest floating precision (e.g. torch.float16
    for a half model whose output is upcast); a leaf gets the wider eps and narrower range of
    its own dtype and the hint. extreme_inputs: the inputs hold values near the dtype's range
    (the special sets): without an independent fp64 run, a finite compiled value where eager is
    NaN/inf is then not judged (eager's intermediates may have overflowed). fp64_perturbed: the
    fp64 runs on inputs scaled by (1 +- SENS_DELTA r), antithetic pairs (runs.Antithetic, or a flat
    list +, -, +, -): rule 1's conditioning term S. fp64_low: the coarsest dtype the fp64 run rounds
    its floating data to (an explicit cast in the program); where it is as coarse as a leaf's dtype,
    the fp64 run is no independent judge of NaN/inf (kind.no-independent-run). fp64_rounded: the
    fp64 runs under other roundings of the intermediates (runs.RoundingRuns: Monte Carlo, walk,
    flushed subnormals, kept precision): a compiled integer they reach, or a compiled value on the
    far side of a step they cross, is decided by rounding. fp64_beyond: the marks of the program's
    fp64 runs under Inductor's decompositions, a float64 leaf per output leaf: 1 where an element
    depends on a value beyond the range of acc(D) (D's arithmetic cannot hold it, and eager's finite
    value is luck: not judged, nor a NaN c where f is infinite), 2 where beyond float64's too or on a
    conversion of NaN/inf to an integer (a NaN f there is no judge), else 0 (rule 8). origins: per
    tensor leaf path, what eager's own run says of it (runs.EagerOrigin, origins.EagerOrigins): the dtype
    it was computed in (its tolerance dtype, in place of dtype_hint), whether it depends on a random
    draw, where eager itself overflowed, and where its own partial results reach the edge of the range
    (runs.EdgeOfRange); a compiled NaN/inf, or a value beyond the bound, where eager and fp64 are finite is
    excused by an overflow only where eager's own overflow or partial results at the edge show (rules 3,
    8). With origins, the eager runs' disagreement sets aside only the leaves that disagree or depend on
    a random draw; a disagreeing leaf without one is still judged by kind (a NaN/inf where both eager
    runs and fp64 are finite fails). lenient: at a low-precision sweep point of a program with a discontinuous op,
    the wider programs' outputs (float32, float64; None where not run): a leaf that fails is judged again with
    compiled's value where it agrees with one of them and eager does not (lenient.py, `lenient.wider-run`).
    """
    hint, low64 = nx.parse_dtype(dtype_hint), nx.parse_dtype(fp64_low)
    index_info = dict(index_info or {})
    varies: dict[str, Any] = {}  # leaf path -> its second eager run, where the two eager runs differ
    diff = _bitwise_difference(ref, ref2, index_info) if ref2 is not None else None
    if diff is not None and origins is not None:
        varies = _varying_leaves(ref, ref2, index_info)
    pairs: list = []
    bad = _pair(ref, got, "", pairs)
    whole = apply(OUTPUT, OutputPair(diff, bool(varies), bad))
    if diff is not None and "output.nondeterministic" in whole.cleared:  # no origins, or runs of two structures
        return Verdict(True, NONDETERMINISTIC, diff.abs_err, diff.rel_err, diff.path, whole.notes[0],
                       (LeafRules(diff.path, tuple(whole.counts)),))
    if bad is not None and "output.structure" in whole.charges:
        return Verdict(False, STRUCTURE_MISMATCH, 0.0, 0.0, bad[0], whole.reason("output.structure", 1),
                       (LeafRules(bad[0], tuple(whole.counts)),))

    by_path = _runs_by_path(fp64, fp64_perturbed, fp64_rounded, fp64_beyond)
    wider = [dict(leaves(a)) for a in lenient or () if a is not None]
    max_abs = max_rel = 0.0
    failures: list[tuple[str, str, tuple[int, ...]]] = []
    notes: list[str] = []
    counts: list[LeafRules] = []
    aside = 0  # leaves set aside as nondeterministic
    for path, r, g in pairs:
        origin = origins.get(path) if origins is not None else None
        random = origin is None or origin.random  # a random draw (or no record): no one right value
        if diff is not None and (random or path in varies):  # eager varies here: set aside, or judged by kind only
            res = _judge_varying(VaryingLeaf(path, r, g, None if random else varies[path], by_path(path).fp64,
                                             origin))
            aside += res.ok
        else:
            def judge_leaf(r: Any, path: str = path, g: Any = g, origin: EagerOrigin | None = origin) -> LeafResult:
                return _judge_leaf(path, r, g, hint, index_info.get(path), extreme_inputs, by_path(path), low64, origin)
            res = judge_leaf(r)
            if not res.ok and wider:
                res = judge_lenient(r, g, [w.get(path) for w in wider], res, judge_leaf)
        max_abs, max_rel = max(max_abs, res.abs_err), max(max_rel, res.rel_err)
        if not res.ok:
            failures.append((path, res.detail, res.failing))
        notes.extend(res.notes)
        if res.rules:
            counts.append(LeafRules(path, tuple(res.rules)))
    if failures:
        if origins is not None:  # a leaf that depends on no random draw first: its failure is the telling one
            failures.sort(key=lambda fl: bool(getattr(origins.get(fl[0]), "random", True)))
        path, detail, failing = failures[0]
        more = f" (+{len(failures) - 1} more failing leaves of {len(pairs)})" if len(failures) > 1 else ""
        return Verdict(False, MISMATCH, max_abs, max_rel, path, detail + more, tuple(counts), failing)
    if diff is not None:
        judged = len(pairs) - aside
        rest = f"; the other {judged} {'leaf agrees' if judged == 1 else 'leaves agree'}" if judged else ""
        return Verdict(True, NONDETERMINISTIC, max(diff.abs_err, max_abs), max(diff.rel_err, max_rel), diff.path,
                       f"nondeterministic, not judged: {diff.why} ({aside} of {len(pairs)} leaves set aside: they differ "
                       f"between the eager runs or depend on a random draw{rest})", tuple(counts))
    detail = f"match: {len(pairs)} {'leaf agrees' if len(pairs) == 1 else 'leaves agree'}, max abs err {fmt(max_abs)}"
    if notes:
        detail += "; note: " + notes[0] + (f" (+{len(notes) - 1} more notes)" if len(notes) > 1 else "")
    return Verdict(True, MATCH, max_abs, max_rel, None, detail, tuple(counts))


def _judge_varying(x: VaryingLeaf) -> LeafResult:
    """A leaf of an output whose two eager runs differ (the VARIES rules): set aside, not judged, unless it
    depends on no random draw and compiled is NaN/inf where both eager runs and the fp64 run are finite, and
    neither eager's own overflow nor another order of its partial results at the edge of the range gives it."""
    out = apply(VARIES, x)
    bad = out.pending()
    if bad is None or not bool(bad.any()):
        return LeafResult(True, rules=out.counts)
    e, c, n, p = x.real(x.r), x.real(x.g), int(bad.sum()), first_true(bad)
    what = f"{x.path or 'output'} {str(x.r.dtype).removeprefix('torch.')}{list(x.r.shape)}"
    return LeafResult(False, math.inf, math.inf,
                      f"{what}: {out.reason('varies.non-finite', n)} at {n} elements, first at "
                      f"{index_str(p, tuple(e.shape))}: eager {fmt(float(e.reshape(-1)[p]))}, compiled "
                      f"{fmt(float(c.reshape(-1)[p]))}", rules=out.counts, failing=failing_of(bad))


def _varying_leaves(ref: Any, ref2: Any, index_info: Mapping[str, tuple]) -> dict[str, Any]:
    """Leaf path -> the second run's leaf, for each leaf where two eager runs of one structure differ (NaN ==
    NaN); {} where their structures differ."""
    pairs: list = []
    if _pair(ref, ref2, "", pairs):
        return {}
    out = {}
    for path, a, b in pairs:
        if isinstance(a, torch.Tensor):
            a, b = nx.dense(a), nx.dense(b).to(a.device)
            if path in index_info and not (a.is_floating_point() or a.is_complex()):
                if not judge_index(a, b, *index_info[path], torch.float64, path).ok:
                    out[path] = b
            elif not bool(nx.equal_nan(a, b).all()):
                out[path] = b
        elif not (a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))):
            out[path] = b
    return out


def _runs_by_path(fp64: Any, perturbed: Any, rounded: RoundingRuns | None, beyond: Any):
    """path -> the fp64 runs' leaves at that path (runs.LeafRuns); the runs beside fp64 only where there is one."""
    if isinstance(rounded, (list, tuple)) and not rounded:
        rounded = None
    if rounded is not None and not isinstance(rounded, RoundingRuns):
        raise TypeError(f"fp64_rounded: a runs.RoundingRuns, not {type(rounded).__name__}")
    fp64_by_path = dict(leaves(fp64)) if fp64 is not None else {}
    pairs = [p.map(lambda t: dict(leaves(t))) for p in Antithetic.pairs(perturbed or [])] if fp64 is not None else []
    rounding = rounded.map(lambda t: dict(leaves(t))) if fp64 is not None and rounded is not None else None
    beyond_by_path = dict(leaves(beyond)) if beyond is not None else {}

    def at(path: str) -> LeafRuns:
        get = lambda d: d.get(path)  # noqa: E731
        return LeafRuns(fp64_by_path.get(path), tuple(p.map(get) for p in pairs),
                        rounding.map(get) if rounding is not None else None, beyond_by_path.get(path))
    return at


def compare_eager(seed_ref: Any, variant_ref: Any, seed_fp64: Any = None, *,
                  index_info: Mapping[str, tuple] | None = None, dtype_hint: Any = None) -> Verdict:
    """A rewritten program's eager output against the original's (unsound-rewrite check); the rules of judge."""
    return judge(seed_ref, variant_ref, seed_fp64, index_info=index_info, dtype_hint=dtype_hint)

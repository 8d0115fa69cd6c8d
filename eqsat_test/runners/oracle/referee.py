"""The referee: where eager and compiled disagree, which side is wrong, by a reference that shares no kernel with eager.

The fp64 run that judges a mismatch is eager again, with wider inputs: where eager's algorithm is
itself wrong (a shortcut that drops IEEE special cases, a missing argument check), fp64 agrees with
eager and the compiler is convicted. The referee reads the program as ATen ops (make_fx over the
functionalized program: a tracing, the values are thrown away) and computes the disagreeing
output leaf from the op table (runners/oracle/reftable.py): each op's mathematical definition in
NumPy float64 (80-bit long double for float64 programs), Python math or mpmath, exact integers
modulo the dtype's width, exact rationals for division and remainders, C99 Annex F special cases
written out. It does so twice, once rounding every floating op to its dtype (IEEE semantics op by
op) and once in the working precision throughout (the real-number value); a side is right at an
element where it is close to either (RIGHT units of eps(D) relative to |reference| + the leaf's
median magnitude), wrong where it is far from both (WRONG units) or of another kind (NaN, +-inf).

Per disagreeing element: eager right and compiled wrong -> compiled; eager wrong and compiled right
-> eager; both wrong -> both. The program: `compiled` if compiled is wrong anywhere, `eager` if only
eager is, `both`, `undecided` (the reference is close to both), or `no-referee` (an op on the path has
no reference, the program draws random numbers, writes into its inputs, converts NaN to integers, or
is too large). A crash: where the ops' definitions reject the program (a float alpha on integers,
torch.add's rule), compiled's refusal is right and eager's silent result wrong -> `eager`.
"""
from __future__ import annotations

import dataclasses
import operator
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.exact import index_str
from eqsat_test.runners.oracle.reftable import RANDOM, RefOp, inplace, lookup
from eqsat_test.runners.oracle.refvalue import Ctx, RefRejected, RefUndefined, V, eps, from_tensor, is_float
from eqsat_test.runners.protocol import reseed
from eqsat_test.runners.records import Finding, FindingKind, as_finding

COMPILED, EAGER, BOTH, UNDECIDED, NO_REFEREE = "compiled", "eager", "both", "undecided", "no-referee"
WRONG_SIDES = (COMPILED, EAGER, BOTH, UNDECIDED, NO_REFEREE)

RIGHT, WRONG = 64.0, 4096.0  # in units of eps(D) * (|reference| + the leaf's median magnitude)
MAX_ELEMENTS = 1 << 24  # the most elements of all the values the referee computes for one program
MAX_SECONDS = 60.0  # a pass that takes longer gives up (no referee): the worker's task has a time limit
EXAMPLES = 8  # deciding elements kept for repro.py
_IGNORED_KWARGS = ("memory_format", "layout", "device", "pin_memory", "non_blocking", "requires_grad")


@dataclass(frozen=True)
class RefereeVerdict:
    """Which side of a disagreement is wrong, and by what reference."""

    wrong: str  # one of WRONG_SIDES
    reference: str = ""  # the references of the ops on the path ("pow: C99 pow ...")
    leaf: str | None = None  # the output leaf judged
    checked: int = 0  # disagreeing elements compared with the reference
    eager_wrong: int = 0  # of them: eager wrong, compiled right
    compiled_wrong: int = 0  # compiled wrong, eager right
    both_wrong: int = 0
    example: str = ""  # the first deciding element: where, eager, compiled, reference
    missing: tuple = ()  # ops on the path that have no reference
    reason: str = ""  # no-referee / undecided: why; a rejected program: the rule
    elements: tuple = ()  # ((flat index, reference value as float/int or "nan"/"inf"/"-inf"), ...)
    failing: tuple = ()  # the elements judged: those the oracle charged (flat indices); (): every disagreeing one

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["missing"], d["elements"] = list(self.missing), [list(e) for e in self.elements]
        d["failing"] = list(self.failing)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "RefereeVerdict":
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["missing"] = tuple(kw.get("missing") or ())
        kw["elements"] = tuple(tuple(e) for e in kw.get("elements") or ())
        kw["failing"] = tuple(int(k) for k in kw.get("failing") or ())
        return cls(**kw)

    @property
    def line(self) -> str:
        """One line for a finding's detail and the summary."""
        if self.wrong == NO_REFEREE:
            return f"no independent referee: {self.reason}"
        if self.wrong == UNDECIDED:
            return f"the independent referee cannot tell: {self.reason or 'the reference is close to both sides'}"
        who = {COMPILED: "compiled is wrong, eager right", EAGER: "eager is wrong, compiled right",
               BOTH: "both eager and compiled are wrong"}[self.wrong]
        what = self.reason or self.example
        return f"{who} per the independent referee ({self.reference}){': ' + what if what else ''}"


# ---- the program as ATen ops ---------------------------------------------------------------------

def trace(forward, inputs: list) -> torch.fx.GraphModule:
    """The functionalized ATen graph of `forward` on CPU copies of `inputs` (real tensors: it runs eager
    once; the copies keep the caller's inputs unchanged)."""
    from torch.func import functionalize  # tracing only, on a failing verdict
    from torch.fx.experimental.proxy_tensor import make_fx
    xs = [t.detach().cpu().clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    with torch.no_grad():
        reseed()
        return make_fx(functionalize(forward, remove="mutations_and_views"), tracing_mode="real")(*xs)


def _packet(target) -> tuple[str, str] | None:
    if isinstance(target, torch._ops.OpOverload):
        return target._schema.name.split("::")[-1], target._overloadname
    return None


def _output(gm) -> list:
    out = next(n for n in gm.graph.nodes if n.op == "output")
    return [leaf for _, leaf in nx.leaves(out.args[0])]


def _ancestors(nodes: list) -> set:
    seen: set = set()
    stack = [n for n in nodes if isinstance(n, torch.fx.Node)]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


def _rows(gm, needed: set) -> tuple[list[RefOp], list[str], str | None]:
    """The table rows of the needed nodes, the ops without one, and a reason there is no referee at all."""
    rows: list = []
    missing: list = []
    for n in gm.graph.nodes:
        if n not in needed or n.op != "call_function" or n.target is operator.getitem:
            continue
        p = _packet(n.target)
        if p is None:
            missing.append(str(n.target))
            continue
        if p[0] in RANDOM:
            return rows, missing, f"the program draws random numbers ({p[0]})"
        row = lookup(*p)
        if row is None:
            missing.append(f"{p[0]}.{p[1]}")
        elif row not in rows:
            rows.append(row)
    for n in gm.graph.nodes:  # a write into an input: the caller's inputs are no longer the program's
        p = _packet(n.target) if n.op == "call_function" else None
        if p and inplace(p[0]) and n.args and isinstance(n.args[0], torch.fx.Node) and n.args[0].op == "placeholder":
            return rows, missing, "the program writes into its inputs"
    return rows, sorted(set(missing)), None


def _impl(row: RefOp):
    """The function a row names: module:name, module:TABLE[key] or module:factory(arg)."""
    import importlib
    mod_name, spec = row.impl.split(":")
    mod = importlib.import_module(f"eqsat_test.runners.oracle.{mod_name}")
    if "[" in spec:
        table, key = spec[:-1].split("[")
        return getattr(mod, table)[key]
    if "(" in spec:
        fn, arg = spec[:-1].split("(")
        return getattr(mod, fn)(arg)
    return getattr(mod, spec)


def evaluate(gm, inputs: list, ctx: Ctx, wanted: list) -> dict:
    """The reference value of every node in `wanted`'s ancestry (node -> V, a tuple, or a Python value)."""
    needed = _ancestors(wanted)
    env: dict = {}
    placeholders = iter(inputs)
    total = 0
    t0 = time.monotonic()
    for n in gm.graph.nodes:
        if time.monotonic() - t0 > MAX_SECONDS:
            raise RefUndefined(f"the reference took more than {MAX_SECONDS:.0f} s")
        if n.op == "placeholder":
            x = next(placeholders)
            if n in needed:
                env[n] = from_tensor(x, ctx) if isinstance(x, torch.Tensor) else x
            continue
        if n not in needed:
            continue
        if n.op == "get_attr":
            t = getattr(gm, n.target)
            env[n] = from_tensor(t, ctx) if isinstance(t, torch.Tensor) else t
            continue
        if n.op != "call_function":
            continue
        args = torch.fx.node.map_arg(n.args, lambda m: env[m])
        kwargs = {k: v for k, v in torch.fx.node.map_arg(n.kwargs, lambda m: env[m]).items() if k not in _IGNORED_KWARGS}
        if n.target is operator.getitem:
            env[n] = args[0][args[1]]
            continue
        row = lookup(*_packet(n.target))
        for old, new in row.kwargs:
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        out = _impl(row)(ctx, *args, **kwargs)
        packet = _packet(n.target)[0]
        if inplace(packet) and isinstance(n.args[0], torch.fx.Node):  # later reads of the written tensor see it
            env[n.args[0]] = out
        for v in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(v, V):
                total += v.a.size
        if total > MAX_ELEMENTS:
            raise RefUndefined(f"more than {MAX_ELEMENTS} elements: too large for the referee")
        env[n] = out
    return env


# ---- judging a leaf -------------------------------------------------------------------------------

def _np(t: torch.Tensor, work) -> np.ndarray:
    t = nx.dense(t).cpu()
    if t.is_floating_point():
        return t.double().numpy().astype(work)
    if t.dtype == torch.bool:
        return t.numpy()
    return t.to(torch.int64).numpy()


def _dist(x: np.ndarray, r: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """|x - r| in units; 0 where both are NaN or the same infinity; inf where their kinds differ."""
    with np.errstate(all="ignore"):
        d = np.abs(x - r) / unit
        fin = np.isfinite(x) & np.isfinite(r)
        d = np.where(fin, d, np.inf)
        return np.where((np.isnan(x) & np.isnan(r)) | (np.isinf(r) & (x == r)), 0.0, d)


def _fmt(v) -> str:
    return f"{float(v):.9g}" if isinstance(v, (float, np.floating)) else str(v)


def _value(v) -> Any:
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if np.isfinite(f) else str(f)
    return v.item() if hasattr(v, "item") else v


def judge_leaf(e: torch.Tensor, c: torch.Tensor, r1: V, r2: V, work, failing: tuple = ()) -> dict:
    """Counts of the disagreeing elements by which side the reference convicts, and the deciding ones; with
    `failing` (flat indices: the elements the oracle charged), of those elements only, so an element the oracle
    cleared (summation order after a cancellation, say) never decides the side."""
    if tuple(e.shape) != r1.shape or e.dtype != r1.dtype:
        return {"structure": True}
    ea, ca = _np(e, work), _np(c, work)
    if is_float(r1.dtype):
        with np.errstate(all="ignore"):
            diff = ~((ea == ca) | (np.isnan(ea) & np.isnan(ca)))
            fin = np.abs(r1.a[np.isfinite(r1.a) & (r1.a != 0)])
            typ = float(np.median(fin)) if fin.size else 0.0
            ep = eps(r1.dtype)
            wrong = min(WRONG, 2.0 ** -4 / ep)
            right = min(RIGHT, wrong / 8)
            tiny = float(torch.finfo(r1.dtype).smallest_normal)
            # strict: relative to |reference|; lenient: to |reference| + the leaf's median magnitude (an
            # element that comes of cancelling larger terms). Eager is convicted leniently, compiled cleared
            # strictly: an eager-bug needs both, so rounding noise never makes one.
            strict = np.maximum(ep * np.abs(r1.a), tiny)
            lenient = np.maximum(ep * (np.abs(r1.a) + typ), tiny)

            def dist(x, unit):
                return np.minimum(_dist(x, r1.a, unit), _dist(x, r2.a.astype(work), unit))
            e_ok, c_ok = dist(ea, strict) <= right, dist(ca, strict) <= right
            e_bad, c_bad = dist(ea, lenient) > wrong, dist(ca, strict) > wrong
    else:
        diff = ea != ca
        e_ok = e_bad_ = ea == r1.a
        c_ok = ca == r1.a
        e_bad, c_bad = ~e_bad_, ~c_ok
    if failing:
        charged = np.zeros(diff.size, dtype=bool)
        charged[[k for k in failing if 0 <= k < diff.size]] = True
        diff = diff & charged.reshape(diff.shape)
    eager = diff & e_bad & c_ok
    comp = diff & c_bad & e_ok
    both = diff & e_bad & c_bad
    out = {"checked": int(diff.sum()), "eager": int(eager.sum()), "compiled": int(comp.sum()), "both": int(both.sum())}
    for side, mask in (("compiled", comp), ("eager", eager), ("both", both)):
        pos = np.flatnonzero(mask)[:EXAMPLES]
        if pos.size and "first" not in out:
            k = int(pos[0])
            out["first"] = (side, k, ea.reshape(-1)[k], ca.reshape(-1)[k], r1.a.reshape(-1)[k])
        out.setdefault("positions", {})[side] = [(int(k), _value(r1.a.reshape(-1)[k])) for k in pos]
    return out


def _structure(e: Any, c: Any, r: Any) -> str | None:
    """compiled / eager / both by the reference's dtype and shape, where the two sides' differ."""
    def sig(x):
        return (tuple(x.shape), x.dtype) if isinstance(x, (torch.Tensor, V)) else None
    se, sc, sr = sig(e), sig(c), sig(r)
    if se == sc:
        return None
    if se == sr:
        return COMPILED
    return EAGER if sc == sr else BOTH


# ---- the verdicts ---------------------------------------------------------------------------------

def _work(inputs: list, gm) -> type:
    dts = [t.dtype for t in inputs if isinstance(t, torch.Tensor)]
    dts += [n.meta["val"].dtype for n in gm.graph.nodes if isinstance(n.meta.get("val"), torch.Tensor)]
    return np.longdouble if torch.float64 in dts else np.float64


def reference_values(forward, inputs: list, leaf_index: list[int] | None = None):
    """(gm, rows, the output nodes, rounded and unrounded values of the wanted outputs, the working precision);
    raises RefUndefined (with `missing` set where ops have no reference) or RefRejected."""
    try:
        gm = trace(forward, inputs)
    except Exception as e:  # noqa: BLE001 - a program make_fx cannot trace has no referee
        raise RefUndefined(f"the program could not be traced to ATen ops ({type(e).__name__}: {str(e)[:120]})") from None
    outs = _output(gm)
    wanted = [outs[k] for k in leaf_index] if leaf_index is not None else outs
    rows, missing, why = _rows(gm, _ancestors(wanted))
    if why:
        raise RefUndefined(why)
    if missing:
        err = RefUndefined(f"no reference for {', '.join(missing)}")
        err.missing = tuple(missing)
        raise err
    work = _work(inputs, gm)
    vals = []
    for rounded in (True, False):
        env = evaluate(gm, inputs, Ctx(work, rounded), wanted)
        vals.append([env[n] if isinstance(n, torch.fx.Node) else n for n in wanted])
    return rows, vals[0], vals[1], work


def _describe(rows: list[RefOp]) -> str:
    """The references of the ops on the path, short: "pow: C99 pow; div: IEEE 754 operations"."""
    picked = [r for r in rows if r.kind not in ("layout", "creation")] or rows
    short = [f"{r.aten}: {r.reference.split(' (')[0].split(';')[0].split(':')[0]}" for r in picked[:4]]
    return "; ".join(short) + (" ..." if len(picked) > 4 else "")


def referee_mismatch(forward, inputs: list, eager: Any, compiled: Any, leaf: str | None,
                     failing: tuple = ()) -> RefereeVerdict:
    """Which side is wrong where the judge found eager and compiled disagreeing on output leaf `leaf` (at the
    elements `failing`, flat indices, where the judge names them: Verdict.failing)."""
    el, cl = nx.leaves(eager), nx.leaves(compiled)
    paths = [p for p, _ in el]
    k = paths.index(leaf) if leaf in paths else (0 if leaf in (None, "") and paths else None)
    if k is None or len(cl) != len(el):
        return RefereeVerdict(NO_REFEREE, leaf=leaf, reason="the outputs' structures differ")
    e, c = el[k][1], cl[k][1]
    if not (isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor)):
        return RefereeVerdict(NO_REFEREE, leaf=leaf, reason="the disagreeing output is not a tensor")
    try:
        rows, r1, r2, work = reference_values(forward, inputs, None)
    except RefRejected as err:
        return RefereeVerdict(BOTH, leaf=leaf, reason=f"both run a program its ops' definitions reject: {err}")
    except RefUndefined as err:
        return RefereeVerdict(NO_REFEREE, leaf=leaf, reason=str(err), missing=getattr(err, "missing", ()))
    if len(r1) != len(el):
        return RefereeVerdict(NO_REFEREE, leaf=leaf, reason="the traced program's outputs do not line up with eager's")
    ref_text = _describe(rows)
    a, b = r1[k], r2[k]
    if not isinstance(a, V):
        return RefereeVerdict(NO_REFEREE, leaf=leaf, reason="the reference of this output is not a tensor")
    side = _structure(e, c, a)
    if side is not None:
        what = (f"eager {tuple(e.shape)} {e.dtype}, compiled {tuple(c.shape)} {c.dtype}, reference {a.shape} "
                f"{a.dtype}")
        return RefereeVerdict(side, ref_text, leaf, 1, int(side == EAGER), int(side == COMPILED), int(side == BOTH),
                              f"output{leaf or ''}: {what}")
    failing = tuple(int(k) for k in failing)
    res = judge_leaf(e, c, a, b, work, failing)
    counts = dict(checked=res["checked"], eager_wrong=res["eager"], compiled_wrong=res["compiled"],
                  both_wrong=res["both"])
    wrong = (COMPILED if res["compiled"] else EAGER if res["eager"] and not res["both"] else
             BOTH if res["both"] else UNDECIDED)
    example, elements = "", ()
    if "first" in res:
        side, pos, ev, cv, rv = res["first"]
        where = index_str(pos, tuple(e.shape))
        example = f"output{leaf or ''} at {where}: eager {_fmt(ev)}, compiled {_fmt(cv)}, reference {_fmt(rv)}"
        elements = tuple(tuple(p) for p in res.get("positions", {}).get(wrong, []))
    reason = "" if wrong != UNDECIDED else "at every disagreeing element the reference is close to both sides"
    return RefereeVerdict(wrong, ref_text, leaf, example=example, reason=reason, elements=elements, failing=failing,
                          **counts)


def referee_crash(forward, inputs: list, eager: Any) -> RefereeVerdict:
    """Where the compiled program raised and eager ran: `eager` if the ops' definitions reject the program
    (compiled's refusal is right, eager's silent result wrong); else `compiled` if eager's outputs agree with
    the reference, `both` if not, `no-referee` where it cannot tell."""
    try:
        rows, r1, r2, work = reference_values(forward, inputs, None)
    except RefRejected as err:
        return RefereeVerdict(EAGER, "the ops' definitions", reason=f"eager runs a program that its ops' definitions "
                              f"reject ({err}); compiled refuses it")
    except RefUndefined as err:
        return RefereeVerdict(NO_REFEREE, reason=str(err), missing=getattr(err, "missing", ()))
    el = nx.leaves(eager)
    bad = 0
    for (_, e), a, b in zip(el, r1, r2):
        if isinstance(e, torch.Tensor) and isinstance(a, V):
            bad += 1 if (tuple(e.shape), e.dtype) != (a.shape, a.dtype) else _eager_far(e, a, b, work)
    return RefereeVerdict(BOTH if bad else COMPILED, _describe(rows), eager_wrong=bad,
                          reason="eager's output is also wrong per the reference" if bad else "")


def _eager_far(e: torch.Tensor, a: V, b: V, work) -> int:
    """How many elements of eager's output are far from the reference (its WRONG distance)."""
    ea = _np(e, work)
    if not is_float(a.dtype):
        return int((ea != a.a).sum())
    ep = eps(a.dtype)
    fin = np.abs(a.a[np.isfinite(a.a) & (a.a != 0)])
    typ = float(np.median(fin)) if fin.size else 0.0
    unit = np.maximum(ep * (np.abs(a.a) + typ), float(torch.finfo(a.dtype).smallest_normal))
    d = np.minimum(_dist(ea, a.a, unit), _dist(ea, b.a.astype(work), unit))
    return int((d > min(WRONG, 2.0 ** -4 / ep)).sum())


def safely(fn, *args) -> dict:
    """fn(*args).to_dict(), or a no-referee verdict that says what failed: the referee never fails a task."""
    try:
        return fn(*args).to_dict()
    except Exception as e:  # noqa: BLE001 - the referee's own failure is a verdict of no referee
        return RefereeVerdict(NO_REFEREE, reason=f"the referee failed: {type(e).__name__}: {str(e)[:200]}").to_dict()


_RULED = ("miscompile", "seed-miscompile", "compile-crash", "run-crash")


def rule_on(f: Finding | dict) -> Finding:
    """Apply the referee's verdict (f.referee, from the worker) to a finding: a new one of kind `eager-bug`
    where eager is the wrong side (the judged kind kept as `judged_kind`), and one line in the detail
    saying which side the independent referee convicts or that there is none."""
    f = as_finding(f)
    if not f.referee or f.kind not in _RULED:
        return f
    v = RefereeVerdict.from_dict(f.referee)
    f = f.with_(referee_line=v.line)
    if v.wrong == EAGER:
        f = f.with_(judged_kind=f.kind, kind=FindingKind.EAGER_BUG.value)
    return f.with_(detail=f"{f.detail or ''} [referee: {v.line}]")

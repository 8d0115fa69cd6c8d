"""The eager side of a judgement: eager twice (nondeterminism), the fp64 run, index sources, and the coarsest floating dtype the program computes in."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.constants import TIE_ROTATIONS
from eqsat_test.runners.oracle.engine import Hit, apply, behaviour
from eqsat_test.runners.oracle.inputs import InputSet, flushed_fp64_inputs, perturbed_fp64_inputs, to_fp64_inputs
from eqsat_test.runners.oracle.judge import Verdict, judge
from eqsat_test.runners.oracle.modes import (
    BeyondRange,
    FloatDtypes,
    KeptPrecision,
    RoundingNoise,
    TieOrder,
    coarsest,
    float64_default,
)
from eqsat_test.runners.oracle.origins import EagerOrigins, replay
from eqsat_test.runners.oracle.rules import RETRY
from eqsat_test.runners.oracle.runs import Antithetic, RoundingRuns
from eqsat_test.runners.oracle.verdict import LeafRules
from eqsat_test.runners.protocol import reseed, to_cpu


class EagerRef(NamedTuple):
    set: InputSet
    ref: Any  # eager output
    ref2: Any  # a second eager output, not reseeded: a program that draws random numbers shows it
    fp64: Any  # the program with every floating input in float64; None if that run fails
    idx: Any  # index sources (lowering/emit.py): index outputs are judged by the values they select
    compute_dtype: str | None  # the coarsest floating dtype of any intermediate (None: no floating op)
    # the coarsest dtype the fp64 run rounds its floating data to (an explicit cast inside the program,
    # x.bfloat16()); None: it stays in float64. The judge then has no independent fp64 run for NaN/inf
    fp64_low: str | None = None
    # the fp64 runs on inputs moved by 1 +- SENS_DELTA r, antithetic pairs (judge's conditioning term),
    # made on the first call: only a verdict that fails without them needs them (S only widens the
    # bound); None: no fp64 run
    fp64p: Callable[[], tuple[Antithetic, ...] | None] | None = None
    # the fp64 runs under other roundings of the intermediates to compute_dtype, by name (runs.RoundingRuns:
    # Monte Carlo, the walk, subnormals flushed where an input holds them, casts' precision kept where the
    # fp64 run casts to a coarser dtype); made on the first call, by a verdict that fails with S; None: no
    # fp64 run or float op
    fp64mc: Callable[[], RoundingRuns | None] | None = None
    # the marks of the fp64 run of the program under Inductor's decompositions (BeyondRange), per output
    # element: 1 where it depends on a value beyond the range of D's accumulation dtype (a layer_norm's
    # variance of values near float32's max, a uint8 cumprod), 2 where beyond float64's too (the fp64
    # run's own overflow), else 0; made on the first call, by a verdict that still fails; None: none
    fp64_beyond: Callable[[], Any] | None = None
    # where the program sorts (sort, argsort, topk): its fp64 run with ties in index order and with each
    # group of ties rotated by one (TieOrder); an element that differs between them depends on the order of tied keys and
    # is not judged. Made on the first call, by a verdict that still fails; None: no sort, or no fp64 run
    ties: Callable[[], tuple | None] | None = None
    # per tensor leaf path of ref2, what eager's own run says of it (runs.EagerOrigin: the dtype it was computed
    # in, a random draw, eager's own overflow, its partial results at the edge of the range; origins.EagerOrigins);
    # None: not recorded
    origins: dict | None = None

def eager_reference(forward, index_sources, s: InputSet, cpu_forward=None) -> EagerRef:
    """Run the program eagerly on one input set (raises what the program raises). cpu_forward (the
    program on the CPU, runners.protocol.on_cpu): a program that computes in float64 throughout
    on a GPU has its fp64 run there instead, so that it is a second, independent float64 run (another
    libm), not eager again: CUDA eager's own float64 hardswish is 6.5e-8 off, and a compiled value
    that agrees with the CPU is no miscompile (judge's rule 6 otherwise compares with eager alone)."""
    reseed()
    with torch.no_grad():
        ref = forward(*s.inputs)
        rec, again = EagerOrigins(), replay(forward, s.inputs)  # its overflow and edge: run again where asked
        with rec:
            ref2 = forward(*s.inputs)
        idx = index_sources(*s.inputs)
    fp64, rec64 = None, FloatDtypes(widen=True)
    # a program that casts to a coarser dtype inside may mix dtypes in float64 (batch_norm of float64
    # data with a weight cast to float32 raises): then the casts round once and keep the precision
    # (KeptPrecision), so that there is an fp64 run all the same. A float64 program on a GPU has its
    # fp64 run on the CPU (another libm), the device's only if that fails
    low = coarsest(rec.seen)
    cpu_first = cpu_forward is not None and low == torch.float64 and _on_gpu(s.inputs)
    for fwd, mode in [(f, m) for f in ([cpu_forward, forward] if cpu_first else [forward])
                      for m in (FloatDtypes(widen=True), KeptPrecision())]:
        try:
            with torch.no_grad(), float64_default(), mode:
                reseed()
                fp64 = fwd(*to_fp64_inputs(s.inputs))
            rec64 = mode
            break
        except Exception:  # noqa: BLE001 - no fp64 reference then (judge's rule 6)
            fp64 = None
    name = lambda d: str(d).removeprefix("torch.") if d else None  # noqa: E731
    low64 = coarsest(rec64.narrowed)
    if fp64 is None:
        return EagerRef(s, ref, ref2, None, idx, name(low), origins=rec.origins(ref2, again))
    # one float64 copy of the inputs, made now (the compiled run comes between, and a miscompile may
    # write into its inputs); the deferred runs derive theirs from it only on a failing verdict
    plain = torch.utils._pytree.tree_map(
        lambda t: t.clone() if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) else t,
        to_fp64_inputs(s.inputs))
    delta = nx.sens_delta(low64)
    beyond = None
    if low is not None:  # float64 too: its reductions' partial results; any input set (a uint8 sweep's cumprod)
        beyond = _deferred_beyond(forward, plain, nx.acc_dtype(low))
    return EagerRef(s, ref, ref2, fp64, idx, name(low), fp64_low=name(low64),
                    fp64p=_once(lambda: _perturbed_runs(forward, plain, delta)),
                    fp64mc=_once(lambda: _rounding_runs(forward, plain, low, low64)) if low is not None else None,
                    fp64_beyond=beyond, ties=_deferred_ties(forward, plain), origins=rec.origins(ref2, again))


def _run(forward, inputs: Callable[[], tuple | None], mode: Callable[[], Any] | None = None) -> Any:
    """One fp64 run (float64 the default dtype, the seed reset) on the inputs `inputs()` makes, on the CPU; None
    if it raises or there are no such inputs."""
    try:
        with torch.no_grad(), float64_default():
            xs = inputs()
            if xs is None:
                return None
            reseed()
            if mode is None:
                return to_cpu(forward(*xs))
            with mode():
                return to_cpu(forward(*xs))
    except Exception:  # noqa: BLE001 - this run adds nothing then
        return None


def _perturbed_runs(forward, plain: tuple, delta: float) -> tuple[Antithetic, ...] | None:
    """SENS_DRAWS antithetic pairs of fp64 runs on inputs scaled by 1 +- delta r (two draws: one may move a
    cancelling pair of terms by nearly the same amount; + and -: the judge widens only where the two changes
    mirror each other); None if every run raises."""
    pairs = tuple(Antithetic(*(_run(forward, lambda d=sign * delta, k=k: perturbed_fp64_inputs(plain, d, seed=k))
                               for sign in (1, -1))) for k in range(nx.SENS_DRAWS))
    return None if all(r is None for p in pairs for r in p.both()) else pairs


def _rounding_runs(forward, plain: tuple, low: torch.dtype, low64: torch.dtype | None) -> RoundingRuns | None:
    """The fp64 runs under other roundings (runs.RoundingRuns); None if every run raises."""
    def pair(make) -> Antithetic:
        return Antithetic(*(_run(forward, lambda: plain, lambda sign=sign: make(sign)) for sign in (1, -1)))
    runs = RoundingRuns(
        noise=tuple(pair(lambda sign, k=k: RoundingNoise(low, k, sign)) for k in range(nx.SENS_DRAWS)),
        walk=pair(lambda sign: RoundingNoise(low, 0, sign, walk=True, scale=1.0)),
        walk_half=pair(lambda sign: RoundingNoise(low, 0, sign, walk=True, scale=nx.WALK_HALF)),
        flushed=_run(forward, lambda: flushed_fp64_inputs(plain, low)),  # none where no input holds subnormals
        kept_precision=_run(forward, lambda: plain, KeptPrecision) if low64 is not None else None)
    return None if runs.empty() else runs


def _on_gpu(inputs) -> bool:
    return any(isinstance(t, torch.Tensor) and t.device.type != "cpu" for t in torch.utils._pytree.tree_leaves(inputs))


def _once(make: Callable[[], Any]) -> Callable[[], Any]:
    """make() on the first call (only a verdict that fails needs it), its result on every call."""
    out: list = []

    def get() -> Any:
        if not out:
            out.append(make())
        return out[0]
    return get


def _deferred_beyond(forward, plain: tuple, acc: torch.dtype) -> Callable[[], Any]:
    """The fp64 run of the program traced with Inductor's decomposition table (make_fx, recursively,
    as aot_eager_decomp_partition does) under BeyondRange(acc) and under BeyondRange(float64), on the
    first call: per element of each output leaf, 0 (no mark), 1 (depends on a value beyond acc's range)
    or 2 (beyond float64's too: the fp64 run's own overflow; or on a conversion of NaN/inf to an integer,
    which both runs mark); None if it fails."""

    def make() -> Any:
        from torch._inductor.decomposition import select_decomp_table  # only on a failing verdict
        from torch.fx.experimental.proxy_tensor import make_fx
        for tracing in ("real", "fake"):  # fake: a program that mixes dtypes in float64 traces (decomposed, it promotes)
            try:
                with torch.no_grad(), float64_default():
                    reseed()
                    gm = make_fx(forward, decomposition_table=select_decomp_table(), tracing_mode=tracing)(*plain)
                    marks = []
                    for dt in dict.fromkeys((acc, torch.float64)):  # beyond acc(D), then beyond float64 too
                        reseed()
                        mode = BeyondRange(dt)
                        with mode:
                            out = gm(*plain)
                        marks.append(to_cpu(mode.outputs(out)))
                    beyond, own = marks[0], marks[-1]
                    return torch.utils._pytree.tree_map(
                        lambda a, b: a + b if isinstance(a, torch.Tensor) else a, beyond, own)
            except Exception:  # noqa: BLE001 - no such run then
                pass
        return None
    return _once(make)


def _deferred_ties(forward, plain: tuple) -> Callable[[], tuple | None]:
    """The fp64 runs under TieOrder on the first call: ties in index order, then rotated within each group
    by 1, 2, ... up to the largest group seen less one (at most TIE_ROTATIONS); None if the program sorts
    nothing, no key ties, or a run fails."""

    def make() -> tuple | None:
        runs = []
        try:
            with torch.no_grad(), float64_default():
                first = TieOrder(0)
                reseed()
                with first:
                    runs.append(to_cpu(forward(*plain)))
                if not first.sorted or first.largest < 2:  # no sort, or no tie: no further run
                    return None
                for shift in range(1, min(first.largest, TIE_ROTATIONS + 1)):
                    reseed()
                    with TieOrder(shift):
                        runs.append(to_cpu(forward(*plain)))
        except Exception:  # noqa: BLE001 - no such runs then
            return None
        return tuple(runs)
    return _once(make)


@dataclass(frozen=True)
class TiedLeaf:
    """A tensor leaf of a failing verdict of a program that sorts, as the RETRY rules see it: eager's, compiled's
    and the fp64 runs' with ties in index order and rotated within each group (all of one shape)."""

    r: torch.Tensor
    g: torch.Tensor
    ties: tuple[torch.Tensor, ...]


@behaviour("ties.sort-order")
def ties_sort_order(x: TiedLeaf, _pending) -> Hit | None:
    """The elements that differ between the tie orders' runs (NaN == NaN) where compiled differs from eager and
    is of the kind of one of them (finite, NaN, that infinity: nx.kind_of_any); a NaN/inf no order gives stays."""
    dep = torch.zeros(x.g.shape, dtype=torch.bool)
    for b in x.ties[1:]:
        dep |= ~nx.equal_nan(x.ties[0], b)
    if not bool(dep.any()):
        return None
    return Hit(dep & ~nx.equal_nan(x.g, x.r) & nx.kind_of_any(x.g, list(x.ties)))


def _untie(ref: Any, got: Any, ties: tuple, index_paths=()) -> tuple[Any, tuple[LeafRules, ...]]:
    """got with eager's value where the RETRY rules take it (ties.sort-order), and their counts per leaf; (got, ())
    where the structures do not line up. Index outputs (`index_paths`) keep theirs: the judge already weighs an
    index by the value it selects."""
    gl, rl = nx.leaves(got), nx.leaves(ref)
    runs = [nx.leaves(t) for t in ties]
    if any(len(x) != len(gl) for x in [rl, *runs]):
        return got, ()
    counts: list[LeafRules] = []
    out: list = []
    for k, ((path, g), (_, r)) in enumerate(zip(gl, rl)):
        ts = [x[k][1] for x in runs]
        if path not in index_paths and all(isinstance(t, torch.Tensor) for t in (g, r, *ts)) \
                and all(t.shape == g.shape for t in (r, *ts)) and g.dtype == r.dtype:
            res = apply(RETRY, TiedLeaf(r, g, tuple(ts)))
            took = res.cleared.get("ties.sort-order")
            if took is not None:
                g = torch.where(took, r, g)
            if res.counts:
                counts.append(LeafRules(path, tuple(res.counts)))
        out.append(g)
    it = iter(out)
    return nx.rebuild(got, lambda leaf: next(it)), tuple(counts)


def conditioned(verdict_of: Callable[[Any, Any, Any, Any], Verdict], ref: Any, got: Any,
                fp64p: Callable[[], tuple[Antithetic, ...] | None] | None,
                fp64mc: Callable[[], RoundingRuns | None] | None = None,
                fp64_beyond: Callable[[], Any] | None = None, ties: Callable[[], tuple | None] | None = None,
                index_paths=()) -> Verdict:
    """verdict_of(None, None, None, got), judged without S; a failing verdict again with the perturbed
    fp64 runs, one that still fails with the Monte Carlo rounding runs too, one that still fails on a
    special set with the decomposed fp64 run under BeyondRange, and one that still fails, where the
    program sorts, with eager's value at the elements that depend on the order of tied keys (a note).
    The same verdict as judging with them always (each only widens what passes), at their cost only on
    failure."""
    v = verdict_of(None, None, None, got)
    runs = fp64p() if not v.ok and fp64p is not None else None
    if runs is not None:
        v = verdict_of(runs, None, None, got)
    mc = fp64mc() if not v.ok and fp64mc is not None else None
    if mc is not None:  # judge's fp64_rounded
        v = verdict_of(runs, mc, None, got)
    beyond = fp64_beyond() if not v.ok and fp64_beyond is not None else None
    if beyond is not None:
        v = verdict_of(runs, mc, beyond, got)
    pair = ties() if not v.ok and ties is not None else None
    untied, counts = _untie(ref, got, pair, index_paths) if pair is not None else (got, ())
    n = sum(c.count for lr in counts for c in lr.counts)
    if not n:
        return v
    v = verdict_of(runs, mc, beyond, untied)
    note = f"{n} elements depend on the order of a sort's tied keys (stable sorts with ties in index order and " \
           f"rotated within each group differ there): not judged"
    for lr in counts:
        v = v.with_counts(lr.leaf, lr.counts)
    return dataclasses.replace(v, detail=f"{v.detail}; note: {note}" if v.ok else f"{v.detail} ({note})")


def judge_against(r: EagerRef, got: Any) -> Verdict:
    """The verdict on one input set: single tasks and batches judge alike (on CPU copies)."""
    ref, got, fp64, ref2, idx = to_cpu((r.ref, got, r.fp64, r.ref2, r.idx))
    return conditioned(lambda fp, mc, beyond, g: judge(ref, g, fp64, ref2=ref2, index_info=idx, dtype_hint=r.compute_dtype,
                                                    fp64_perturbed=fp, extreme_inputs=r.set.name.startswith("special"),
                                                    fp64_low=r.fp64_low, fp64_rounded=mc, fp64_beyond=beyond,
                                                    origins=r.origins),
                       ref, got, r.fp64p, r.fp64mc, r.fp64_beyond, r.ties, index_paths=set(idx or {}))

"""The eager side of a judgement: eager twice (nondeterminism), the fp64 run, index sources, and the coarsest floating dtype the program computes in."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from runners.exec.protocol import to_cpu
from runners.oracle import numerics as nx
from runners.oracle.inputs import InputSet, perturbed_fp64_inputs, to_fp64_inputs
from runners.oracle.judge import Verdict, judge


class EagerRef(NamedTuple):
    set: InputSet
    ref: Any  # eager output
    ref2: Any  # a second eager output, not reseeded: a program that draws random numbers shows it
    fp64: Any  # the program with every floating input in float64; None if that run fails
    idx: Any  # index sources (lowering/emit.py): index outputs are judged by the values they select
    compute_dtype: str | None  # the coarsest floating dtype of any intermediate (None: no floating op)
    # the fp64 runs on inputs moved by +-SENS_DELTA (judge's conditioning term), made on the first call:
    # only a verdict that fails without them needs them (S only widens the bound); None: no fp64 run
    fp64p: Callable[[], list | None] | None = None


class FloatDtypes(TorchDispatchMode):
    """Records the floating dtypes of every op's outputs while a program runs eagerly."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[torch.dtype] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                self.seen.add(t.dtype)
        return out


def coarsest(dtypes) -> torch.dtype | None:
    """The least precise floating dtype of `dtypes` (None if there is none). The judge takes the
    less precise of it and each output's own dtype: a float64 program that rounds to float32
    inside is judged at float32, a float32 one that never goes below float32 at float32."""
    return max(dtypes, key=lambda d: torch.finfo(d).eps) if dtypes else None


def eager_reference(forward, index_sources, s: InputSet) -> EagerRef:
    """Run the program eagerly on one input set (raises what the program raises)."""
    torch.manual_seed(0)
    with torch.no_grad():
        ref = forward(*s.inputs)
        rec = FloatDtypes()
        with rec:
            ref2 = forward(*s.inputs)
        idx = index_sources(*s.inputs)
    fp64 = None
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            fp64 = forward(*to_fp64_inputs(s.inputs))
    except Exception:  # noqa: BLE001 - no fp64 reference then (judge's rule 6)
        fp64 = None
    low = coarsest(rec.seen)
    return EagerRef(s, ref, ref2, fp64, idx, str(low).removeprefix("torch.") if low else None,
                    _perturbed_runs(forward, s.inputs) if fp64 is not None else None)


def _perturbed_runs(forward, inputs) -> Callable[[], list | None]:
    """The fp64 runs of rule 1's S, deferred. Their inputs are made now (the compiled run comes between)."""
    # two draws: one may move a cancelling pair of terms by nearly the same amount; each antithetic
    # (+ and -): the judge widens only where the two changes mirror each other
    moved = [perturbed_fp64_inputs(inputs, delta, seed=k)
             for k in range(nx.SENS_DRAWS) for delta in (nx.SENS_DELTA, -nx.SENS_DELTA)]
    runs: list = []

    def get() -> list | None:
        if not runs:
            try:
                with torch.no_grad():
                    for xs in moved:
                        torch.manual_seed(0)
                        runs.append(to_cpu(forward(*xs)))
            except Exception:  # noqa: BLE001 - no conditioning term then
                runs.append(None)
        return None if runs[-1] is None else runs
    return get


def conditioned(verdict_of: Callable[[Any], Verdict], fp64p: Callable[[], list | None] | None) -> Verdict:
    """verdict_of(None), judged without S; a failing verdict again with the perturbed fp64 runs.
    The same verdict as judging with them always (S only widens the bound), at their cost only on failure."""
    v = verdict_of(None)
    if v.ok or fp64p is None:
        return v
    runs = fp64p()
    return v if runs is None else verdict_of(runs)


def judge_against(r: EagerRef, got: Any) -> Verdict:
    """The verdict on one input set: single tasks and batches judge alike (on CPU copies)."""
    ref, got, fp64, ref2, idx = to_cpu((r.ref, got, r.fp64, r.ref2, r.idx))
    return conditioned(lambda fp: judge(ref, got, fp64, ref2=ref2, index_info=idx, dtype_hint=r.compute_dtype,
                                        fp64_perturbed=fp, extreme_inputs=r.set.name.startswith("special")), r.fp64p)

"""The lenient rule of low-precision sweep points (rules.py's `lenient.wider-run`): compiled may agree with the float32/float64 program instead of eager where a discontinuous op follows (see runners/checks/sweeps.py).

It stays a judge of its own beside judge(): whether it applies is a property of the sweep point (a
float16/bfloat16 dtype) and of the program (a discontinuous op: floor, a comparison; the sweep plan
knows it, the judge sees only outputs), and it needs a run the judge has not (the program in float32).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from eqsat_test.runners.oracle.engine import Hit, behaviour
from eqsat_test.runners.oracle.judge import Verdict, judge
from eqsat_test.runners.oracle.numerics import LOOSE_TOL, leaves, rebuild, tolerance
from eqsat_test.runners.oracle.verdict import RuleCount


def _close(g: torch.Tensor, a: torch.Tensor, rtol: float) -> torch.Tensor:
    g64, a64 = g.to(torch.float64), a.to(torch.float64)
    nan = torch.isnan(g64) & torch.isnan(a64)
    return nan | (g64 == a64) | ((g64 - a64).abs() <= rtol + rtol * a64.abs())


def _agrees(t: torch.Tensor, a: torch.Tensor, exact: bool) -> torch.Tensor:
    return t == a.to(t.dtype) if exact else _close(t, a, LOOSE_TOL)


@dataclass(frozen=True)
class LenientLeaf:
    """A tensor leaf of a failing verdict at a lenient sweep point: eager's, compiled's (on eager's device) and
    the wider programs' (float32, float64) at the same path."""

    r: torch.Tensor
    g: torch.Tensor
    alts: tuple


@behaviour("lenient.wider-run")
def lenient_wider_run(x: LenientLeaf, _pending=None) -> Hit | None:
    """The elements where compiled differs from eager (exactly for integers and bools, beyond the allclose
    tolerance for floats) but agrees with a wider program (exactly, or within LOOSE_TOL) from which eager itself
    differs there (a step that eager's rounding moved); None where none differ. Where eager agrees with the wider
    programs, a compiled value of neither is judged as anywhere else."""
    r, g = x.r, x.g
    exact = not r.is_floating_point()
    differs = (r != g) if exact else ~_close(g, r, tolerance(r.dtype))
    if not bool(differs.any()):
        return None
    ok = torch.zeros_like(differs)
    for a in x.alts:
        if isinstance(a, torch.Tensor) and a.shape == g.shape:
            a = a.to(g.device)
            ok |= _agrees(g, a, exact) & ~_agrees(r, a, exact)
    return Hit(differs & ok, lambda n: f"excused {n} elements where compiled agrees with the float32/float64 program")


def lenient_judge(ref, got, fp64, ref32, *, ref2=None, index_info=None, dtype_hint=None,
                  extreme_inputs=False, fp64_perturbed=None, fp64_low=None, fp64_rounded=None,
                  fp64_beyond=None, origins=None) -> Verdict:
    """judge(), excusing elements where compiled disagrees with (low-precision) eager but agrees
    with the program run in float32 or float64 (see the module docstring): those take compiled's value in
    eager's output, which is judged again (with fp64, index_info and origins only). ref2: a second eager run, as for
    judge(): a program whose two eager runs differ is "nondeterministic", not judged (the sweep must draw
    ref2 without reseeding, as runners/worker.py does)."""
    v = judge(ref, got, fp64, ref2=ref2, index_info=index_info, dtype_hint=dtype_hint, extreme_inputs=extreme_inputs,
              fp64_perturbed=fp64_perturbed, fp64_low=fp64_low, fp64_rounded=fp64_rounded,
              fp64_beyond=fp64_beyond, origins=origins)
    if v.ok or (ref32 is None and fp64 is None):
        return v
    r_leaves, g_leaves = leaves(ref), leaves(got)
    alts = [dict(leaves(a)) for a in (ref32, fp64) if a is not None]
    if len(r_leaves) != len(g_leaves):
        return v
    counts: dict[str, int] = {}
    blended = []
    for (path, r), (_, g) in zip(r_leaves, g_leaves):
        if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)) or r.shape != g.shape \
                or r.is_complex():
            blended.append(r)
            continue
        g = g.to(r.device)
        hit = lenient_wider_run(LenientLeaf(r, g, tuple(alt.get(path) for alt in alts)))
        take = hit.mask if hit is not None else None
        n = int(take.sum()) if take is not None else 0
        if n:
            counts[path] = n
        blended.append(torch.where(take, g, r) if n else r)
    excused = sum(counts.values())
    if not excused:
        return v
    it = iter(blended)
    v2 = judge(rebuild(ref, lambda _leaf: next(it)), got, fp64, index_info=index_info, origins=origins)
    for path, n in counts.items():
        v2 = v2.with_counts(path, [RuleCount("lenient.wider-run", n)])
    if not v2.ok:
        return dataclasses.replace(v2, detail=v2.detail + f" (after excusing {excused} low-precision elements)")
    return dataclasses.replace(
        v2, detail=f"{v2.detail}; excused {excused} elements where compiled agrees with the float32/float64 "
        f"program (low-precision rounding before a discontinuous op)")

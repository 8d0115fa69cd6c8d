"""The lenient judge of low-precision sweep points: compiled may agree with the float32/float64 program instead of eager where a discontinuous op follows (see runners/checks/sweeps.py)."""
from __future__ import annotations

import dataclasses

import torch

from eqsat_test.runners.oracle.judge import Verdict, judge
from eqsat_test.runners.oracle.numerics import LOOSE_TOL, _rebuild, leaves, tolerance

def _close(g: torch.Tensor, a: torch.Tensor, rtol: float) -> torch.Tensor:
    g64, a64 = g.to(torch.float64), a.to(torch.float64)
    nan = torch.isnan(g64) & torch.isnan(a64)
    return nan | (g64 == a64) | ((g64 - a64).abs() <= rtol + rtol * a64.abs())


def lenient_judge(ref, got, fp64, ref32, *, ref2=None, index_info=None, dtype_hint=None,
                  extreme_inputs=False, fp64_perturbed=None, fp64_low=None, fp64_rounded=None,
                  fp64_beyond=None) -> Verdict:
    """judge(), excusing elements where compiled disagrees with (low-precision) eager but agrees
    with the program run in float32 or float64 (see the module docstring). ref2: a second eager
    run, as for judge(): a program whose two eager runs differ is "nondeterministic", not judged
    (the sweep must draw ref2 without reseeding, as runners/exec/worker.py does)."""
    v = judge(ref, got, fp64, ref2=ref2, index_info=index_info, dtype_hint=dtype_hint, extreme_inputs=extreme_inputs,
              fp64_perturbed=fp64_perturbed, fp64_low=fp64_low, fp64_rounded=fp64_rounded,
              fp64_beyond=fp64_beyond)
    if v.ok or (ref32 is None and fp64 is None):
        return v
    r_leaves, g_leaves = leaves(ref), leaves(got)
    alts = [dict(leaves(a)) for a in (ref32, fp64) if a is not None]
    if len(r_leaves) != len(g_leaves):
        return v
    excused = 0
    blended = []
    for (path, r), (_, g) in zip(r_leaves, g_leaves):
        if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)) or r.shape != g.shape \
                or r.is_complex():
            blended.append(r)
            continue
        g = g.to(r.device)
        exact = not r.is_floating_point()
        differs = (r != g) if exact else ~_close(g, r, tolerance(r.dtype))
        if not bool(differs.any()):
            blended.append(r)
            continue
        ok = torch.zeros_like(differs)
        for alt in alts:
            a = alt.get(path)
            if isinstance(a, torch.Tensor) and a.shape == g.shape:
                a = a.to(g.device)
                ok |= (g == a.to(g.dtype)) if exact else _close(g, a, LOOSE_TOL)
        take = differs & ok
        excused += int(take.sum())
        blended.append(torch.where(take, g, r) if bool(take.any()) else r)
    if not excused:
        return v
    it = iter(blended)
    v2 = judge(_rebuild(ref, lambda _leaf: next(it)), got, fp64, index_info=index_info)
    if not v2.ok:
        return dataclasses.replace(v2, detail=v2.detail + f" (after excusing {excused} low-precision elements)")
    return dataclasses.replace(
        v2, detail=f"{v2.detail}; excused {excused} elements where compiled agrees with the float32/float64 "
        f"program (low-precision rounding before a discontinuous op)")

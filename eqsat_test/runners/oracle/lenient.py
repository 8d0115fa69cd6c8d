"""The lenient rule of low-precision sweep points (rules.py's `lenient.wider-run`, the LENIENT scope): compiled may agree with the float32/float64 program instead of eager where a discontinuous op follows (see runners/checks/sweeps.py).

Whether it applies is a property of the sweep point (a float16/bfloat16 dtype) and of the program (a
discontinuous op: floor, a comparison; the sweep plan knows it, the judge sees only outputs), and it
needs a run the judge has not (the program in float32): the sweep passes those runs as judge()'s
`lenient`, and a leaf that fails is judged again with compiled's value where the rule takes it.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch

from eqsat_test.runners.oracle.engine import Hit, apply, behaviour
from eqsat_test.runners.oracle.exact import LeafResult
from eqsat_test.runners.oracle.numerics import LOOSE_TOL, tolerance
from eqsat_test.runners.oracle.rules import LENIENT


def _close(g: torch.Tensor, a: torch.Tensor, rtol: float) -> torch.Tensor:
    g64, a64 = g.to(torch.float64), a.to(torch.float64)
    nan = torch.isnan(g64) & torch.isnan(a64)
    return nan | (g64 == a64) | ((g64 - a64).abs() <= rtol + rtol * a64.abs())


def _agrees(t: torch.Tensor, a: torch.Tensor, exact: bool) -> torch.Tensor:
    return t == a.to(t.dtype) if exact else _close(t, a, LOOSE_TOL)


@dataclass(frozen=True)
class LenientLeaf:
    """A tensor leaf that fails at a lenient sweep point, as the LENIENT rules see it: eager's, compiled's (on
    eager's device) and the wider programs' (float32, float64) at the same path."""

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
    return Hit(differs & ok, lambda n: f"excused {n} elements where compiled agrees with the float32/float64 program "
                                       f"(low-precision rounding before a discontinuous op)")


def judge_lenient(r, g, alts: list, failed: LeafResult, judge_leaf: Callable[[torch.Tensor], LeafResult]) -> LeafResult:
    """A leaf that `failed` at a lenient sweep point, judged again by `judge_leaf` with compiled's value in eager's
    where the LENIENT rules take it (`alts`: the wider programs' leaves at its path); `failed` where they take none
    (or the leaf is no real tensor of compiled's shape)."""
    if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)) or r.shape != g.shape or r.is_complex():
        return failed
    g = g.to(r.device)
    out = apply(LENIENT, LenientLeaf(r, g, tuple(alts)))
    took = out.cleared.get("lenient.wider-run")
    if took is None:
        return failed
    res = judge_leaf(torch.where(took, g, r))
    n = int(took.sum())
    if not res.ok:
        return dataclasses.replace(res, detail=f"{res.detail} (after excusing {n} low-precision elements)",
                                   rules=[*res.rules, *out.counts])
    return dataclasses.replace(res, notes=[*out.notes, *res.notes], rules=[*res.rules, *out.counts])

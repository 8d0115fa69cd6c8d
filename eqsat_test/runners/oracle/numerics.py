"""Numerical facts the oracle relies on: eps and ranges by dtype, rule 1's bound and conditioning term, special values, and the walkers over nested outputs (leaves, rebuild, to_fp64)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import torch

__all__ = [
    "neighbourhoods", "max_errors", "equal_nan", "kind_of_any", "normalize_leaf", "scalar_kind", "type_name",
    "leaves", "to_fp64", "tolerance", "special_values", "eps", "real_dtype", "parse_dtype", "tol_dtype",
    "acc_dtype", "ulp", "Bound", "bound", "sens_delta", "sensitivity", "walk_sensitivity", "over_peers", "multiplier",
    "acc_ulps", "max_finite",
    # the constants, re-exported from constants.py
    "ACC_ULPS", "ACC_ULPS_NOREF", "ACC_ULPS_ONE", "EDGE_FACTOR", "LOOSE_TOL", "M_MANY", "M_ONE", "MANY_PEERS",
    "NEAR_TIE_ULPS", "NOREF_ACC_FACTOR", "OVERFLOW_MARGIN", "OWN_ROUNDING_ULPS", "PEER_GRID", "PEER_RANGE", "ROUND_ULPS",
    "ROUNDING_RUN_WEIGHT", "SENS_CAST_ULPS", "SENS_DELTA", "SENS_DRAWS", "SENS_MULT", "SENS_SMOOTH", "WALK_HALF",
    "WALK_LINEAR", "YARD_QUANTILE",
]

from eqsat_test.runners.oracle.constants import (
    ACC_ULPS,
    ACC_ULPS_NOREF,
    ACC_ULPS_ONE,
    ALLCLOSE_TOL,
    EDGE_FACTOR,
    FLOAT8_TOL,
    LOOSE_TOL,
    M_MANY,
    M_ONE,
    MANY_PEERS,
    NEAR_TIE_ULPS,
    NOREF_ACC_FACTOR,
    OVERFLOW_MARGIN,
    OWN_ROUNDING_ULPS,
    PEER_GRID,
    PEER_RANGE,
    ROUND_ULPS,
    ROUNDING_RUN_WEIGHT,
    SENS_CAST_ULPS,
    SENS_DELTA,
    SENS_DRAWS,
    SENS_MULT,
    SENS_SMOOTH,
    WALK_HALF,
    WALK_LINEAR,
    YARD_QUANTILE,
)

# The per-element rule these serve (runners/oracle/constants.py gives each constant's reason):
#
#   |c - f| <= M(n) * yard + ROUND_ULPS * (ulp(f) + eps(D) * typ) + K(n) * eps(acc(D)) * (|f| + typ) + tiny(D)
#
# D: the output's dtype (or dtype_hint's, if less precise); acc(D): the dtype sums of D accumulate
# in (float32 for 16- and 8-bit floats, D otherwise); peers: the leaf's elements with |f| at most
# PEER_RANGE times the element's, n of them; yard: eager's error beyond the rounding of its
# result, max(0, |e - f| - ulp(f)/2), at the element or its YARD_QUANTILE over the peers,
# whichever is larger; typ: the peers' median |f|.


def real_dtype(dtype: torch.dtype) -> torch.dtype:
    if dtype.is_complex:
        return {torch.complex32: torch.float16, torch.complex64: torch.float32}.get(dtype, torch.float64)
    return dtype


def eps(dtype: torch.dtype) -> float:
    return float(torch.finfo(real_dtype(dtype)).eps)


def ulp(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """An upper bound of the spacing of `dtype` at |x| (float64): eps * |x|, and at least the
    spacing of its subnormals."""
    fi = torch.finfo(real_dtype(dtype))
    return (x.abs() * fi.eps).clamp(min=fi.smallest_normal * fi.eps)


def max_finite(dtype: torch.dtype) -> float:
    return float(torch.finfo(real_dtype(dtype)).max)


def tolerance(dtype: torch.dtype) -> float:
    """rtol = atol of an allclose-style comparison for a floating (or complex) dtype."""
    dt = real_dtype(dtype)
    if dt in ALLCLOSE_TOL:
        return ALLCLOSE_TOL[dt]
    if dt.itemsize == 1:  # float8 variants
        return FLOAT8_TOL
    return max(1e-4, 2 * eps(dt))


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype sums of `dtype` accumulate in (eager and Inductor alike): float32 for 16/8-bit floats."""
    dt = real_dtype(dtype)
    return torch.float32 if dt.is_floating_point and dt.itemsize <= 2 else dt


def multiplier(n: torch.Tensor) -> torch.Tensor:
    """M(n) for a tensor of peer counts (float64): M_MANY * MANY_PEERS / n, within [M_MANY, M_ONE]."""
    n = n.to(torch.float64).clamp(min=1)
    return (M_MANY * MANY_PEERS / n).clamp(M_MANY, M_ONE)


def acc_ulps(n: torch.Tensor, reference: bool) -> torch.Tensor:
    """K(n) for a tensor of peer counts (float64): ACC_ULPS * MANY_PEERS / n, within [ACC_ULPS,
    ACC_ULPS_ONE] (a few outputs of long reductions err like a scalar's); without a reference,
    8 times that and at least ACC_ULPS_NOREF."""
    n = n.to(torch.float64).clamp(min=1)
    k = (ACC_ULPS * MANY_PEERS / n).clamp(ACC_ULPS, ACC_ULPS_ONE)
    return k if reference else (NOREF_ACC_FACTOR * k).clamp(min=ACC_ULPS_NOREF)


def parse_dtype(hint: Any) -> torch.dtype | None:
    if hint is None:
        return None
    if isinstance(hint, torch.dtype):
        return hint
    if isinstance(hint, str):
        name = hint.strip().removeprefix("torch.")
        aliases = {"fp16": "float16", "half": "float16", "bf16": "bfloat16", "fp32": "float32",
                   "float": "float32", "fp64": "float64", "double": "float64"}
        dt = getattr(torch, aliases.get(name, name), None)
        if isinstance(dt, torch.dtype):
            return dt
    raise ValueError(f"dtype_hint: not a dtype: {hint!r}")


def tol_dtype(dtype: torch.dtype, hint: torch.dtype | None) -> torch.dtype:
    """The dtype whose eps and range apply: the less precise of the leaf's dtype and the hint."""
    dt = real_dtype(dtype)
    if hint is None or not (hint.is_floating_point or hint.is_complex):
        return dt
    h = real_dtype(hint)
    return h if eps(h) > eps(dt) else dt


# ----------------------------------------------------------------------------------------------
# special values (the "special" input sets; rewrite/rulecheck.py has its own sampler)


def special_values(dtype: torch.dtype) -> torch.Tensor:
    """The special values of a dtype, as a 1-D tensor of that dtype.

    Floats: +-0, +-inf, NaN, subnormals (smallest_normal/2 and the smallest subnormal, both
    signs), smallest_normal, huge (+-finfo.max/2, and +-1e30 where it fits). Integers: iinfo
    min and max, 0, -1 (signed only), 1. Bools: False, True.
    """
    if dtype == torch.bool:
        return torch.tensor([False, True])
    if dtype.is_complex:
        s = special_values(real_dtype(dtype)).to(torch.float64)
        z = torch.zeros_like(s)
        return torch.cat([torch.complex(s, z), torch.complex(z, s), torch.complex(s, s.flip(0))]).to(dtype)
    if dtype.is_floating_point:
        fi = torch.finfo(dtype)
        vals = [0.0, -0.0, math.inf, -math.inf, math.nan]
        vals += [fi.smallest_normal / 2, -fi.smallest_normal / 2]
        vals += [fi.smallest_normal * fi.eps, -fi.smallest_normal * fi.eps]  # smallest subnormal
        vals += [fi.smallest_normal]
        vals += [fi.max / 2, -fi.max / 2]
        if fi.max > 1e30:
            vals += [1e30, -1e30]
        return torch.tensor(vals, dtype=torch.float64).to(dtype)
    ii = torch.iinfo(dtype)
    vals = [ii.min, ii.max, 0, 1] + ([-1] if ii.min < 0 else [])
    return torch.tensor(vals, dtype=torch.int64 if dtype != torch.uint64 else torch.float64).to(dtype)


# ----------------------------------------------------------------------------------------------
# rule 1's bound, per element (runners/oracle/judge.py applies it)


@dataclasses.dataclass
class Bound:
    """The per-element allowance of |c - f| and its parts, for details."""

    bound: torch.Tensor  # the leaf's shape; the rest flat, one entry per element
    mult: torch.Tensor
    k: torch.Tensor
    yard: torch.Tensor
    typ: torch.Tensor
    peers: torch.Tensor


def _prefix_quantile(ys: torch.Tensor, peers: torch.Tensor) -> torch.Tensor:
    """Per element, the YARD_QUANTILE of ys[row, :peers] (ys: rows sorted by |fp64|, +inf where not
    counted, which sorts last), over at most PEER_GRID times as many peers (prefix lengths on a
    geometric grid)."""
    n = ys.size(-1)
    grid = sorted({min(n, max(1, round(PEER_GRID ** k))) for k in range(int(math.log(max(n, 1), PEER_GRID)) + 2)})
    g = torch.tensor(grid)
    slot = torch.searchsorted(g, peers.clamp(min=1).contiguous())  # the first grid length >= peers
    table = torch.zeros(ys.size(0), len(grid), dtype=ys.dtype)
    valid = torch.isfinite(ys).cumsum(-1)
    for k in torch.bincount(slot.reshape(-1), minlength=len(grid)).nonzero().reshape(-1).tolist():
        length = grid[k]
        cnt = valid[:, length - 1]
        kth = (YARD_QUANTILE * (cnt - 1).clamp(min=0)).floor().long()  # lower interpolation
        q = ys[:, :length].sort(-1).values.gather(-1, kth[:, None]).squeeze(-1) if length <= 64 else \
            _kth(ys[:, :length], kth)
        table[:, k] = torch.where(cnt > 0, q, torch.zeros_like(q))
    out = table.gather(-1, slot)
    return torch.where((peers > 0) & torch.isfinite(out), out, torch.zeros_like(out))


def _kth(x: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The (k+1)-th smallest of each row of x, k per row."""
    if bool((k == k[0]).all()):
        return x.kthvalue(int(k[0]) + 1, dim=-1).values
    return x.sort(-1).values.gather(-1, k[:, None]).squeeze(-1)


def _by_size(counted: torch.Tensor, af: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`counted` (|f| per element, +inf where not counted) sorted per row, the sort order, and each
    element's peers: the length of the sorted prefix with |f_j| <= PEER_RANGE |f_i| (af: |f|)."""
    sk, order = counted.sort(-1)
    return sk, order, torch.searchsorted(sk, (af * PEER_RANGE).contiguous(), right=True)


def over_peers(f: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """v per element, or its YARD_QUANTILE over the element's peers (|f_j| <= PEER_RANGE |f_i|, f_j
    finite) where larger: a property of the computation that elements of like size share, seen at some
    of them (a Monte Carlo rounding that happened to move an element's inputs by nothing)."""
    af = neighbourhoods(torch.where(torch.isfinite(f), f.abs(), torch.full_like(f, math.inf)))
    _, order, peers = _by_size(af, af)
    vs = neighbourhoods(torch.where(torch.isfinite(f), v, torch.full_like(v, math.inf))).gather(-1, order)
    return torch.maximum(v, _prefix_quantile(vs, peers).reshape(v.shape))


def bound(e: torch.Tensor, f: torch.Tensor, stat: torch.Tensor, dt: torch.dtype, reference: bool) -> Bound:
    """M(n) * yard + ROUND_ULPS * (ulp(f) + eps(D) * typ) + K(n) * eps(acc(D)) * (|f| + typ), per element
    (the constants above). e, f finite wherever `stat` holds (the elements that make the statistics).

    Peers of element i: the elements j of its neighbourhood (stat) with |f_j| <= PEER_RANGE * |f_i|;
    n = their number; yard = eager's error beyond rounding at i, or its YARD_QUANTILE over the
    peers if larger; typ = the peers' median |f|; with no peers (|f_i| = 0) or no reference, the leaf's."""
    af = neighbourhoods(f.abs())
    m = neighbourhoods(stat)
    own = (neighbourhoods((e - f).abs()) - OWN_ROUNDING_ULPS * ulp(af, dt)).clamp(min=0)
    own = torch.where(m, own, torch.zeros_like(own))
    sk, order, peers = _by_size(torch.where(m, af, torch.full_like(af, math.inf)), af)  # peers: a prefix of sk
    if reference:
        ys = torch.where(m, own, torch.full_like(own, math.inf)).gather(-1, order)
        yard = torch.maximum(own, _prefix_quantile(ys, peers))
    else:
        yard = torch.zeros_like(own)
    count = m.sum(-1, keepdim=True)
    row_med = sk.gather(-1, ((count - 1) // 2).clamp(min=0))
    typ = torch.where((peers > 0) & reference, sk.gather(-1, ((peers - 1) // 2).clamp(min=0)), row_med.expand_as(af))
    typ = torch.where(torch.isfinite(typ), typ, torch.zeros_like(typ))
    mult, k = multiplier(peers), acc_ulps(peers, reference)
    total = (mult * yard + ROUND_ULPS * (ulp(af, dt) + eps(dt) * typ)
             + k * eps(acc_dtype(dt)) * (af + typ)
             + torch.finfo(dt).tiny)  # subnormals flushed to zero (Triton's default) are no miscompile
    flat = lambda t: t.reshape(-1)  # noqa: E731
    return Bound(total.reshape(e.shape), flat(mult), flat(k), flat(yard), flat(typ), flat(peers))


# ----------------------------------------------------------------------------------------------
# walking nested outputs


def children(obj: Any) -> list[tuple[str, Any]] | None:
    """(path suffix, child) pairs of a container, or None for a leaf."""
    if isinstance(obj, Mapping):
        return [(f"[{k!r}]", v) for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(obj)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [(f".{f.name}", getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    return None


def leaves(obj: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Every leaf of a nested structure with its path: [(\"[0]['logits']\", tensor), ...].

    Containers are tuples/lists (namedtuples, torch.return_types included), mappings and
    dataclass instances; everything else (tensors, scalars, None, strings) is a leaf. A bare
    leaf has the path "".
    """
    out: list[tuple[str, Any]] = []

    def walk(o: Any, path: str) -> None:
        kids = children(o)
        if kids is None:
            out.append((path, o))
            return
        for suffix, child in kids:
            walk(child, path + suffix)

    walk(obj, prefix)
    return out


def rebuild(obj: Any, fn) -> Any:
    """Apply fn to every leaf, keeping container types."""
    if isinstance(obj, Mapping):
        items = [(k, rebuild(v, fn)) for k, v in obj.items()]
        try:
            return type(obj)(items)
        except Exception:
            return dict(items)
    if isinstance(obj, tuple):
        items = [rebuild(v, fn) for v in obj]
        if hasattr(obj, "_fields"):  # namedtuple
            return type(obj)(*items)
        if type(obj) is tuple:
            return tuple(items)
        try:  # torch.return_types and other structseq take one sequence
            return type(obj)(items)
        except Exception:
            return tuple(items)
    if isinstance(obj, list):
        items = [rebuild(v, fn) for v in obj]
        if type(obj) is list:
            return items
        try:
            return type(obj)(items)
        except Exception:
            return items
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: rebuild(getattr(obj, f.name), fn) for f in dataclasses.fields(obj) if f.init}
        try:
            return dataclasses.replace(obj, **changes)
        except Exception:
            return obj
    return fn(obj)


def to_fp64(obj: Any) -> Any:
    """Every floating tensor in a nested structure to float64 (complex to complex128); the rest untouched."""

    def conv(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if x.is_floating_point():
                return x.to(torch.float64)
            if x.is_complex():
                return x.to(torch.complex128)
        return x

    return rebuild(obj, conv)


# ----------------------------------------------------------------------------------------------
# tensors as the judge sees them


def dense(t: torch.Tensor) -> torch.Tensor:
    """Detached, strided, conj/neg resolved, dequantized."""
    t = t.detach()
    if t.is_quantized:
        t = t.dequantize()
    if t.layout != torch.strided:
        t = t.to_dense()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    return t


def as_real64(t: torch.Tensor) -> torch.Tensor:
    """float64 values; a complex tensor as its (re, im) pairs folded into the last dim."""
    if t.is_complex():
        r = torch.view_as_real(t.resolve_conj()).to(torch.float64)
        return r.reshape(*t.shape[:-1], -1) if t.dim() else r
    return t.to(torch.float64)


def neighbourhoods(t: torch.Tensor) -> torch.Tensor:
    """t as a 2-D view (groups, n), one group per neighbourhood: the whole leaf (see PEER_RANGE)."""
    return t.reshape(1, -1)


# ----------------------------------------------------------------------------------------------
# leaves as the judge compares them


def max_errors(r: torch.Tensor, g: torch.Tensor) -> tuple[float, float]:
    """max abs and max rel error of g against r (float64, one shape): inf where NaN/inf positions differ."""
    same_kind = (torch.isnan(r) & torch.isnan(g)) | (r == g) | (torch.isfinite(r) & torch.isfinite(g))
    if not bool(same_kind.all()):
        return math.inf, math.inf
    both = torch.isfinite(r) & torch.isfinite(g)
    if not bool(both.any()):
        return 0.0, 0.0
    rr, gg = r[both], g[both]
    d = (gg - rr).abs()
    nz = rr != 0
    rel = float((d[nz] / rr[nz].abs()).max()) if bool(nz.any()) else 0.0
    return float(d.max()), rel


def kind_of_any(g: torch.Tensor, runs: list) -> torch.Tensor:
    """Where g (a leaf) has the kind of one of `runs` (tensors of its shape): finite where it is finite, NaN
    where it is NaN, the same infinity; every element of an integer or bool g."""
    if not (g.is_floating_point() or g.is_complex()):
        return torch.ones(g.shape, dtype=torch.bool, device=g.device)
    out = torch.zeros(g.shape, dtype=torch.bool, device=g.device)
    for t in runs:
        t = t.to(g.device)
        out |= (torch.isfinite(g) & torch.isfinite(t)) | (torch.isnan(g) & torch.isnan(t)) | (torch.isinf(g) & (g == t))
    return out


def equal_nan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    eq = a == b
    if a.is_floating_point() or a.is_complex():
        eq = eq | (torch.isnan(a) & torch.isnan(b))
    return eq


def normalize_leaf(x: Any) -> Any:
    """numpy arrays/scalars to tensors/python scalars; everything else unchanged."""
    if type(x).__module__ == "numpy":
        if type(x).__name__ == "ndarray":
            return torch.as_tensor(x)
        if hasattr(x, "item"):
            return x.item()
    return x


def scalar_kind(x: Any) -> str | None:
    for t, name in ((bool, "bool"), (int, "int"), (float, "float"), (complex, "complex")):
        if isinstance(x, t):
            return name
    return None


def type_name(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ in ("builtins", "torch") else f"{t.__module__}.{t.__qualname__}"


def sens_delta(fp64_low: torch.dtype | None) -> float:
    """How far (relative) the inputs of S's fp64 runs move: SENS_DELTA, or enough to survive the
    rounding to fp64_low inside the program."""
    return SENS_DELTA if fp64_low is None else max(SENS_DELTA, SENS_CAST_ULPS * eps(fp64_low))


def sensitivity(f: torch.Tensor | None, fps: list, dt: torch.dtype, delta: float = SENS_DELTA,
                rounded: bool = False) -> torch.Tensor | None:
    """S (rule 1): how far f moves, to first order, when the inputs move by one rounding of dt
    (the largest change over the fp64 runs `fps`, whose inputs moved by delta). rounded: the Monte
    Carlo runs, whose moves land on neighbouring values of dt and need not mirror: a pair counts
    where neither change is under SENS_SMOOTH times the other (a step moves one side only)."""
    if f is None or not fps or any(fp is None or fp.shape != f.shape for fp in fps):
        return None
    best = torch.zeros_like(f)
    for plus, minus in zip(fps[0::2], fps[1::2]):  # antithetic pairs: f(x(1 + dr)), f(x(1 - dr))
        dp, dm = plus - f, minus - f
        size = (dp.abs() + dm.abs()) / 2
        # smooth where the two changes mirror each other; a step (floor, a comparison) that one side
        # crosses does not: no widening there, a result on the wrong side of a step stays judged
        smooth = torch.isfinite(size) & (
            (torch.minimum(dp.abs(), dm.abs()) >= SENS_SMOOTH * torch.maximum(dp.abs(), dm.abs())) if rounded
            else ((dp + dm).abs() <= SENS_SMOOTH * (dp.abs() + dm.abs())))
        best = torch.maximum(best, torch.where(smooth, size, torch.zeros_like(size)))
    return best * (eps(dt) / delta)


def walk_sensitivity(f: torch.Tensor | None, full: list, half: list, dt: torch.dtype) -> torch.Tensor | None:
    """The walk pair's change of f, (|d+| + |d-|) / 2, counted where each change scales with the moves:
    the pair `half`, whose moves are WALK_HALF of `full`'s (the same signs), changes f by WALK_HALF of
    `full`'s change on each side, within WALK_LINEAR of it. Smooth functions and kinks (a max, relu or
    abs at a tie: the two changes need not mirror) are positively homogeneous in small moves; a step is
    not: its jump stays whole, or vanishes, when the moves halve (a max over four tied adds feeding a
    threshold jumps in both runs alike, which a test of the two changes' sizes took for smooth). Without
    the halved pair: `sensitivity` of the full pair."""
    if len(half) != 2 or any(h is None or f is None or h.shape != f.shape for h in half):
        return sensitivity(f, full, dt, eps(dt), rounded=True)
    if f is None or len(full) != 2 or any(r is None or r.shape != f.shape for r in full):
        return None
    linear = torch.ones_like(f, dtype=torch.bool)
    for run, low in zip(full, half):
        d, h = run - f, low - f
        linear &= (h - WALK_HALF * d).abs() <= WALK_LINEAR * WALK_HALF * d.abs()
    size = ((full[0] - f).abs() + (full[1] - f).abs()) / 2
    return torch.where(linear & torch.isfinite(size), size, torch.zeros_like(size))

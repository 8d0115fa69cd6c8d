"""The oracle: judge whether a program's compiled output agrees with its eager output (Dynamo's fp64 rule, exact ints, tie-aware indices)."""

from __future__ import annotations

import dataclasses
import contextvars
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

__all__ = [
    "Verdict",
    "judge",
    "compare_eager",
    "leaves",
    "to_fp64",
    "tolerance",
    "rmse_multiplier",
    "noise_rel",
    "MATCH",
    "MISMATCH",
    "NONDETERMINISTIC",
    "STRUCTURE_MISMATCH",
]

MATCH = "match"
MISMATCH = "mismatch"
NONDETERMINISTIC = "nondeterministic"
STRUCTURE_MISMATCH = "structure-mismatch"

# rtol = atol for the first, per-element allclose test, by dtype. float32 is Dynamo's default
# `tol` (torch._dynamo.utils.same); float16/bfloat16 are wider (torch.testing's rtol for
# half/bfloat16); float64 is tight because both sides then compute in the same high precision.
_TOL = {
    torch.float64: 1e-7,
    torch.float32: 1e-4,
    torch.float16: 1e-3,
    torch.bfloat16: 1.6e-2,
}
_FLOAT8_TOL = 0.25
_HALF_DTYPES = (torch.float16, torch.bfloat16)

# Two widenings of Dynamo's rule, for cancellation in reductions (measured on this CPU:
# inductor's sum of 2**20 float32 randn is a median 10x, p90 40-70x, max >1000x further from
# fp64 than eager's cascade sum; the one-sample ratio of two rounding errors is heavy-tailed).
# 1. Ill-conditioned: eager is more than ILL_ULPS ulps (of the leaf's RMS magnitude) off fp64.
#    Then compiled also passes within ILL_MULTIPLIER x eager's error, capped at
#    ILL_RTOL_FACTOR x the dtype's rtol of the leaf's RMS magnitude. (Dynamo's rule alone fails
#    ~0.9% of randn(2**20).sum() seeds; with this, 0 of 1,950 seeds over 2**16..2**22.)
# 2. Noise-dominated: eager's own RMS error to fp64 exceeds noise_rel() of the leaf's RMS
#    magnitude (it has lost about half its significand, as in a sum of a million values that
#    cancels to ~0). Such a leaf says nothing about the compiler: it passes (NaN/Inf positions
#    still must agree) with a note. Set NOISE_REL_FP32 = math.inf to switch this off.
ILL_ULPS = 16.0
ILL_MULTIPLIER = 100.0
ILL_RTOL_FACTOR = 10.0
NOISE_REL_FP32 = math.sqrt(torch.finfo(torch.float32).eps)  # ~3.5e-4
# Eager non-finite where fp64 and compiled are finite and close (compiled is the better one,
# Dynamo's Super_SloMo corner case; e.g. fp16 eager overflows where inductor keeps fp32):
# "close" means within this rtol = atol (Dynamo uses 4e-2).
LOOSE_TOL = 4e-2


_EXTREME_INPUTS: contextvars.ContextVar[bool] = contextvars.ContextVar("extreme_inputs", default=False)


@dataclass(frozen=True)
class Verdict:
    """One judgement of a program's compiled output against its eager output."""

    ok: bool  # True: agree (or set aside as nondeterministic)
    kind: str  # "match" | "mismatch" | "nondeterministic" | "structure-mismatch"
    max_abs_err: float  # over all float/int leaves (0.0 when none), finite positions only
    max_rel_err: float  # |got - ref| / |ref| over finite positions where ref != 0
    leaf: str | None  # path of the first failing leaf, like "[0]['logits'][1]"; None if ok
    detail: str  # one human-readable line

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# ----------------------------------------------------------------------------------------------
# walking nested structures


def _children(obj: Any) -> list[tuple[str, Any]] | None:
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
        kids = _children(o)
        if kids is None:
            out.append((path, o))
            return
        for suffix, child in kids:
            walk(child, path + suffix)

    walk(obj, prefix)
    return out


def _rebuild(obj: Any, fn) -> Any:
    """Apply fn to every leaf, keeping container types."""
    if isinstance(obj, Mapping):
        items = [(k, _rebuild(v, fn)) for k, v in obj.items()]
        try:
            return type(obj)(items)
        except Exception:
            return dict(items)
    if isinstance(obj, tuple):
        items = [_rebuild(v, fn) for v in obj]
        if hasattr(obj, "_fields"):  # namedtuple
            return type(obj)(*items)
        if type(obj) is tuple:
            return tuple(items)
        try:  # torch.return_types and other structseq take one sequence
            return type(obj)(items)
        except Exception:
            return tuple(items)
    if isinstance(obj, list):
        items = [_rebuild(v, fn) for v in obj]
        if type(obj) is list:
            return items
        try:
            return type(obj)(items)
        except Exception:
            return items
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: _rebuild(getattr(obj, f.name), fn) for f in dataclasses.fields(obj) if f.init}
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

    return _rebuild(obj, conv)


# ----------------------------------------------------------------------------------------------
# tolerances


def _real_dtype(dtype: torch.dtype) -> torch.dtype:
    if dtype.is_complex:
        return {torch.complex32: torch.float16, torch.complex64: torch.float32}.get(dtype, torch.float64)
    return dtype


def _eps(dtype: torch.dtype) -> float:
    return float(torch.finfo(_real_dtype(dtype)).eps)


def tolerance(dtype: torch.dtype) -> float:
    """rtol = atol of the per-element allclose test for a floating (or complex) dtype."""
    dt = _real_dtype(dtype)
    if dt in _TOL:
        return _TOL[dt]
    if dt.itemsize == 1:  # float8 variants
        return _FLOAT8_TOL
    return max(1e-4, 2 * _eps(dt))


def rmse_multiplier(dtype: torch.dtype, numel: int) -> float:
    """Dynamo's multiplier for the RMSE-vs-fp64 test (torch._dynamo.utils.same).

    2 for float32/float64, 3 for float16/bfloat16 (AMP false alarms, per Dynamo), 3 for
    tensors under 1,000 elements, and Dynamo's larger small-tensor multipliers (8 for <= 500
    elements, 10 for <= 10) always on: scalar outputs such as losses are common here and their
    one-sample RMSE is noise.
    """
    dt = _real_dtype(dtype)
    m = 3.0 if (dt in _HALF_DTYPES or dt.itemsize == 1) else 2.0
    if numel <= 10:
        return 10.0
    if numel <= 500:
        return 8.0
    if numel < 1000:
        return max(m, 3.0)
    return m


def noise_rel(dtype: torch.dtype) -> float:
    """Relative RMS error of eager to fp64 beyond which a leaf counts as noise-dominated."""
    return max(NOISE_REL_FP32, ILL_ULPS * _eps(dtype))


def _parse_dtype(hint: Any) -> torch.dtype | None:
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


def _tol_dtype(dtype: torch.dtype, hint: torch.dtype | None) -> torch.dtype:
    """The dtype whose tolerances apply: the less precise of the leaf's dtype and the hint."""
    dt = _real_dtype(dtype)
    if hint is None or not (hint.is_floating_point or hint.is_complex):
        return dt
    h = _real_dtype(hint)
    return h if _eps(h) > _eps(dt) else dt


# ----------------------------------------------------------------------------------------------
# small helpers


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _index_str(flat_pos: int, shape: tuple[int, ...]) -> str:
    if not shape:
        return "()"
    idx = []
    for size in reversed(shape):
        idx.append(flat_pos % size)
        flat_pos //= size
    return "(" + ", ".join(str(i) for i in reversed(idx)) + (",)" if len(shape) == 1 else ")")


def _first(mask: torch.Tensor) -> int:
    """Flat position of the first True in a mask (which has at least one)."""
    return int(mask.reshape(-1).nonzero()[0, 0])


def _rms(x: torch.Tensor) -> float:
    """Root mean square of a float64 tensor, overflow-safe."""
    if x.numel() == 0:
        return 0.0
    m = float(x.abs().max())
    if m == 0.0 or not math.isfinite(m):
        return m
    return m * math.sqrt(float(((x / m) ** 2).mean()))


def _finite_max(x: torch.Tensor) -> float:
    if x.numel() == 0:
        return 0.0
    x = x[torch.isfinite(x)]
    return float(x.max()) if x.numel() else 0.0


def _errors(r: torch.Tensor, g: torch.Tensor) -> tuple[float, float]:
    """max abs and max rel error of g against r (float64, same shape) over both-finite positions."""
    both = torch.isfinite(r) & torch.isfinite(g)
    if not bool(both.any()):
        return 0.0, 0.0
    rr, gg = r[both], g[both]
    d = (gg - rr).abs()
    nz = rr != 0
    rel = d[nz] / rr[nz].abs() if bool(nz.any()) else d.new_zeros(0)
    return _finite_max(d), _finite_max(rel)


def _as_real64(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        return torch.view_as_real(t.resolve_conj()).to(torch.float64)
    return t.to(torch.float64)


def _dense(t: torch.Tensor) -> torch.Tensor:
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


@dataclass
class _LeafResult:
    ok: bool
    abs_err: float = 0.0
    rel_err: float = 0.0
    detail: str = ""
    note: str = ""  # for passing leaves: how they passed, when not plainly


def _is_numpy(obj: Any) -> bool:
    return type(obj).__module__ == "numpy"


def _normalize_leaf(x: Any) -> Any:
    """numpy arrays/scalars to tensors/python scalars; everything else unchanged."""
    if _is_numpy(x):
        if hasattr(x, "shape") and hasattr(x, "dtype") and type(x).__name__ == "ndarray":
            return torch.as_tensor(x)
        if hasattr(x, "item"):
            return x.item()
    return x


def _scalar_kind(x: Any) -> str | None:
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, complex):
        return "complex"
    return None


def _type_name(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ in ("builtins", "torch") else f"{t.__module__}.{t.__qualname__}"


# ----------------------------------------------------------------------------------------------
# structure


def _container_mismatch(r: Any, g: Any) -> str | None:
    if isinstance(r, Mapping):
        if not isinstance(g, Mapping):
            return f"type {_type_name(r)} vs {_type_name(g)}"
        rk, gk = list(r.keys()), list(g.keys())
        if set(rk) != set(gk):
            only_r = [k for k in rk if k not in g]
            only_g = [k for k in gk if k not in r]
            return f"keys differ: only eager {only_r}, only compiled {only_g}"
        return None
    if type(r) is not type(g):
        return f"type {_type_name(r)} vs {_type_name(g)}"
    if isinstance(r, (list, tuple)):
        if len(r) != len(g):
            return f"length {len(r)} vs {len(g)}"
    return None


def _leaf_mismatch(r: Any, g: Any) -> str | None:
    if isinstance(r, torch.Tensor) or isinstance(g, torch.Tensor):
        if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)):
            return f"type {_type_name(r)} vs {_type_name(g)}"
        if tuple(r.shape) != tuple(g.shape):
            return f"shape {tuple(r.shape)} vs {tuple(g.shape)}"
        if r.dtype != g.dtype:
            return f"dtype {r.dtype} vs {g.dtype}"
        return None
    rk, gk = _scalar_kind(r), _scalar_kind(g)
    if rk or gk:
        if rk != gk:
            return f"type {_type_name(r)} vs {_type_name(g)}"
        return None
    if r is None or g is None:
        if not (r is None and g is None):
            return f"type {_type_name(r)} vs {_type_name(g)}"
    return None


def _pair(r: Any, g: Any, path: str, out: list) -> tuple[str, str] | None:
    """Pair up the leaves of r and g into out; return (path, why) at the first structural difference."""
    r, g = _normalize_leaf(r), _normalize_leaf(g)
    kids = _children(r)
    if kids is None:
        if _children(g) is not None:
            return path, f"type {_type_name(r)} vs {_type_name(g)}"
        why = _leaf_mismatch(r, g)
        if why:
            return path, why
        out.append((path, r, g))
        return None
    why = _container_mismatch(r, g)
    if why:
        return path, why
    if isinstance(r, Mapping):
        gkids = [g[k] for k in r.keys()]
    else:
        gkids = [c for _, c in _children(g)]
    for (suffix, rc), gc in zip(kids, gkids):
        bad = _pair(rc, gc, path + suffix, out)
        if bad:
            return bad
    return None


# ----------------------------------------------------------------------------------------------
# leaf judgements


def _judge_float(
    r: torch.Tensor, g: torch.Tensor, f: torch.Tensor | None, tol_dtype: torch.dtype, what: str
) -> _LeafResult:
    """Floating leaves (complex as pairs of reals), as float64 tensors of one shape on one device."""
    shape = tuple(r.shape)
    abs_err, rel_err = _errors(r, g)
    tol = tolerance(tol_dtype)
    eps = _eps(tol_dtype)

    def fail(msg: str) -> _LeafResult:
        return _LeafResult(False, abs_err, rel_err, f"{what}: {msg}")

    # 1. NaN/Inf positions must agree (NaN == NaN, +inf != -inf), except where eager is
    #    non-finite but fp64 is finite, i.e. eager overflowed. On ordinary inputs that is
    #    excused only where compiled is finite and close to fp64 (Dynamo's rule). On extreme
    #    inputs we injected ourselves (special values, boundary sweeps) the float32 program has
    #    no trustworthy answer there at all (a variance over a 1e30 input overflows in eager and
    #    in compiled code alike, differently), so such positions are not judged. A NaN that
    #    truly propagates from a NaN input is NaN in fp64 too, so it is still judged.
    fin_r, fin_g = torch.isfinite(r), torch.isfinite(g)
    both = fin_r & fin_g
    same_nonfinite = (torch.isnan(r) & torch.isnan(g)) | (torch.isinf(r) & (r == g))
    bad = ~(both | same_nonfinite)
    excused = 0
    if bool(bad.any()) and f is not None:
        excuse = bad & ~fin_r & torch.isfinite(f)
        if not _EXTREME_INPUTS.get():  # ordinary inputs: Dynamo's rule, compiled must match fp64
            excuse &= fin_g & ((g - f).abs() <= LOOSE_TOL + LOOSE_TOL * f.abs())
        excused = int(excuse.sum())
        bad = bad & ~excuse
    if bool(bad.any()):
        p = _first(bad)
        n = int(bad.sum())
        return fail(
            f"NaN/Inf positions differ at {n} of {r.numel()} elements, first at "
            f"{_index_str(p, shape)} (eager {_fmt(float(r.reshape(-1)[p]))}, "
            f"compiled {_fmt(float(g.reshape(-1)[p]))})"
        )

    # 2. The usual allclose at the dtype's tolerance.
    far = both & ((g - r).abs() > tol + tol * r.abs())
    n_far = int(far.sum())
    if n_far == 0:
        note = f"eager overflowed (non-finite where fp64 is finite) at {excused} elements: not judged" if excused else ""
        return _LeafResult(True, abs_err, rel_err, note=note)
    p = _first(far)
    first = (
        f"{n_far} of {r.numel()} elements outside allclose(rtol=atol={tol:g}), first at "
        f"{_index_str(p, shape)} (eager {_fmt(float(r.reshape(-1)[p]))}, "
        f"compiled {_fmt(float(g.reshape(-1)[p]))})"
    )
    if f is None:
        return fail(f"{first}, max abs err {_fmt(abs_err)}; no fp64 reference")

    # 3. Dynamo's fp64 rule, over positions where fp64 is finite.
    fin_f = torch.isfinite(f)
    unreferenced = far & ~fin_f
    if bool(unreferenced.any()):
        q = _first(unreferenced)
        return fail(f"{first}; fp64 is non-finite at {_index_str(q, shape)}, so no fp64 rule there")
    mask = both & fin_f
    fm = f[mask]
    ref_err = _rms(r[mask] - fm)
    res_err = _rms(g[mask] - fm)
    scale = _rms(fm)
    mult = rmse_multiplier(tol_dtype, r.numel())
    floor = tol / 10.0 + eps * scale  # Dynamo's tol/10, plus one ulp at the leaf's RMS magnitude
    bound = mult * ref_err + floor
    rule = (
        f"RMSE to fp64: compiled {_fmt(res_err)}, eager {_fmt(ref_err)}, "
        f"bound {_fmt(mult)} x eager + {_fmt(floor)} = {_fmt(bound)}"
    )
    if res_err <= bound:
        return _LeafResult(True, abs_err, rel_err, note=f"{what}: fp64 rule ({rule})")
    if ref_err > ILL_ULPS * eps * scale:
        ill_bound = min(ILL_MULTIPLIER * ref_err, ILL_RTOL_FACTOR * tol * scale)
        if res_err <= ill_bound:
            return _LeafResult(
                True, abs_err, rel_err,
                note=f"{what}: fp64 rule, ill-conditioned (eager {_fmt(ref_err / (eps * scale))} ulps "
                f"off; compiled {_fmt(res_err)} <= {_fmt(ill_bound)})",
            )
    if scale > 0 and ref_err > noise_rel(tol_dtype) * scale:
        return _LeafResult(
            True, abs_err, rel_err,
            note=f"{what}: noise-dominated, not judged beyond NaN/Inf (eager itself is "
            f"{_fmt(ref_err / scale if scale else math.inf)} relative RMS off fp64; {rule})",
        )
    return fail(f"{first}, max abs err {_fmt(abs_err)}; {rule}")


def _judge_exact(r: torch.Tensor, g: torch.Tensor, what: str) -> _LeafResult:
    """Integer and bool leaves: exact."""
    if r.dtype == torch.bool:
        diff = r != g
        abs_err = 1.0 if bool(diff.any()) else 0.0
        rel_err = abs_err
    else:
        r64, g64 = r.to(torch.float64), g.to(torch.float64)
        diff = r != g
        abs_err, rel_err = _errors(r64, g64)
    if not bool(diff.any()):
        return _LeafResult(True, abs_err, rel_err)
    p = _first(diff)
    return _LeafResult(
        False, abs_err, rel_err,
        f"{what}: {int(diff.sum())} of {r.numel()} elements differ (exact), first at "
        f"{_index_str(p, tuple(r.shape))} (eager {r.reshape(-1)[p].item()}, compiled {g.reshape(-1)[p].item()})",
    )


def _judge_index(
    r: torch.Tensor, g: torch.Tensor, source: torch.Tensor, dim: int | None,
    hint: torch.dtype | None, what: str,
) -> _LeafResult:
    """Index leaves (argmax/topk/sort...) judged by the values of `source` they select."""
    if torch.equal(r, g):
        return _LeafResult(True)
    src = _dense(source).to(r.device)
    if dim is None or src.dim() == 0:
        src, ri, gi, d = src.reshape(-1), r.reshape(-1), g.reshape(-1), 0
    else:
        d = dim % src.dim()
        ri, gi = r, g
        if r.dim() == src.dim() - 1:
            ri, gi = r.unsqueeze(d), g.unsqueeze(d)
    ri, gi = ri.to(torch.int64), gi.to(torch.int64)
    n = src.size(d)
    fits = ri.dim() == src.dim() and all(
        ri.size(k) <= src.size(k) for k in range(src.dim()) if k != d
    )
    if not fits or bool(((ri < 0) | (ri >= n)).any()):
        res = _judge_exact(r, g, what)
        return dataclasses.replace(res, detail=res.detail + " (index_info did not fit; compared exactly)")
    out = (gi < 0) | (gi >= n)
    if bool(out.any()):
        p = _first(out)
        return _LeafResult(
            False, float(n), 0.0,
            f"{what}: compiled index {int(gi.reshape(-1)[p])} out of range [0, {n}) at "
            f"{_index_str(p, tuple(gi.shape))}",
        )
    if gi.size(d) > 1:  # topk/sort: indices along dim must not repeat
        def repeats(x: torch.Tensor) -> torch.Tensor:
            s = x.sort(dim=d).values
            return (s.narrow(d, 1, s.size(d) - 1) == s.narrow(d, 0, s.size(d) - 1)).any()

        if bool(repeats(gi)) and not bool(repeats(ri)):
            return _LeafResult(False, 0.0, 0.0, f"{what}: compiled indices repeat along dim {d}")
    rv, gv = src.gather(d, ri), src.gather(d, gi)
    if rv.is_floating_point() or rv.is_complex():
        res = _judge_float(_as_real64(rv), _as_real64(gv), None, _tol_dtype(rv.dtype, hint), what)
    else:
        res = _judge_exact(rv, gv, what)
    if res.ok:
        k = int((ri != gi).sum())
        return dataclasses.replace(res, note=f"{what}: {k} tied indices differ, selected values agree")
    differs = (ri != gi) & ~_equal_nan(rv, gv)
    p = _first(differs) if bool(differs.any()) else 0
    return dataclasses.replace(
        res,
        detail=f"{what}: selected values differ along dim {d}, first at {_index_str(p, tuple(ri.shape))} "
        f"(eager index {int(ri.reshape(-1)[p])} -> {rv.reshape(-1)[p].item()}, "
        f"compiled index {int(gi.reshape(-1)[p])} -> {gv.reshape(-1)[p].item()})",
    )


def _equal_nan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    eq = a == b
    if a.is_floating_point() or a.is_complex():
        eq = eq | (torch.isnan(a) & torch.isnan(b))
    return eq


def _to_tensor(x: Any) -> torch.Tensor:
    """A python float/complex as a 0-d float64/complex128 tensor (python floats are doubles)."""
    if isinstance(x, torch.Tensor):
        return x
    return torch.tensor(x, dtype=torch.complex128 if isinstance(x, complex) else torch.float64)


def _judge_leaf(
    path: str, r: Any, g: Any, f: Any, hint: torch.dtype | None, index: tuple | None
) -> _LeafResult:
    what = path or "output"
    kind = _scalar_kind(r)
    if kind in ("bool", "int"):
        if r == g:
            return _LeafResult(True)
        d = float(abs(int(r) - int(g)))
        return _LeafResult(False, d, d / abs(r) if r else 0.0, f"{what}: {kind} {r} vs {g} (exact)")
    if kind in ("float", "complex"):
        # judged like a 0-d tensor; tolerance of float32 (the usual source of a .item()) or the hint
        tol_dtype = _tol_dtype(torch.float32, hint)
        rt, gt = _as_real64(_to_tensor(r)), _as_real64(_to_tensor(g))
        ft = None
        if isinstance(f, torch.Tensor) and f.numel() == 1 and (f.is_floating_point() or f.is_complex()):
            ft = _as_real64(_dense(f).cpu().reshape(()))
        elif _scalar_kind(f) in ("float", "complex"):
            ft = _as_real64(_to_tensor(f))
        if ft is not None and ft.shape != rt.shape:
            ft = None
        return _judge_float(rt, gt, ft, tol_dtype, f"{what} (python {kind})")
    if isinstance(r, torch.Tensor):
        r, g = _dense(r), _dense(g).to(r.device)
        desc = f"{what} {str(r.dtype).removeprefix('torch.')}{list(r.shape)}"
        if index is not None and not (r.is_floating_point() or r.is_complex() or r.dtype == torch.bool):
            source, dim = index
            return _judge_index(r, g, source, dim, hint, desc + " (indices)")
        if r.is_floating_point() or r.is_complex():
            ft = None
            if isinstance(f, torch.Tensor) and tuple(f.shape) == tuple(r.shape) and (
                f.is_floating_point() or f.is_complex()
            ) and f.is_complex() == r.is_complex():
                fd = _dense(f)
                if _eps(fd.dtype) < _eps(r.dtype) or fd.dtype == torch.float64 or fd.dtype == torch.complex128:
                    ft = _as_real64(fd.to(r.device))
            return _judge_float(_as_real64(r), _as_real64(g), ft, _tol_dtype(r.dtype, hint), desc)
        return _judge_exact(r, g, desc)
    if r is None:
        return _LeafResult(True)
    try:
        same = bool(r == g)
    except Exception:
        same = repr(r) == repr(g)
    if same:
        return _LeafResult(True)
    return _LeafResult(False, 0.0, 0.0, f"{what}: {_type_name(r)} {r!r} vs {g!r}")


def _bitwise_difference(
    ref: Any, ref2: Any, index_info: Mapping[str, tuple] | None
) -> tuple[str, str, float, float] | None:
    """First difference between two eager runs: (path, why, max abs err, max rel err), or None."""
    pairs: list = []
    bad = _pair(ref, ref2, "", pairs)
    if bad:
        return bad[0], f"structure varied between two eager runs: {bad[1]}", 0.0, 0.0
    first = None
    max_abs = max_rel = 0.0
    for path, a, b in pairs:
        what = path or "output"
        if isinstance(a, torch.Tensor):
            a, b = _dense(a), _dense(b).to(a.device)
            if index_info and path in index_info and not (a.is_floating_point() or a.is_complex()):
                source, dim = index_info[path]
                res = _judge_index(a, b, source, dim, torch.float64, what + " (indices)")
                if not res.ok and first is None:
                    first = (path, res.detail)
                continue
            eq = _equal_nan(a, b)
            if a.is_floating_point() or a.is_complex():
                e_abs, e_rel = _errors(_as_real64(a), _as_real64(b))
            elif a.dtype != torch.bool:
                e_abs, e_rel = _errors(a.to(torch.float64), b.to(torch.float64))
            else:
                e_abs = e_rel = 0.0 if bool(eq.all()) else 1.0
            max_abs, max_rel = max(max_abs, e_abs), max(max_rel, e_rel)
            if not bool(eq.all()) and first is None:
                p = _first(~eq)
                first = (
                    path,
                    f"{what}: eager run twice differs at {int((~eq).sum())} of {a.numel()} elements, "
                    f"first at {_index_str(p, tuple(a.shape))} ({a.reshape(-1)[p].item()} vs "
                    f"{b.reshape(-1)[p].item()})",
                )
        else:
            same = (a == b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
            if not same and first is None:
                first = (path, f"{what}: eager run twice differs ({a!r} vs {b!r})")
    if first is None:
        return None
    return first[0], first[1], max_abs, max_rel


# ----------------------------------------------------------------------------------------------
# public


def judge(
    ref: Any,
    got: Any,
    fp64: Any = None,
    *,
    ref2: Any = None,
    index_info: Mapping[str, tuple] | None = None,
    dtype_hint: Any = None,
    extreme_inputs: bool = False,
) -> Verdict:
    """Judge a program's compiled output `got` against its eager output `ref`.

    fp64: the same program's eager output with floating inputs/parameters in float64 (None:
    plain allclose at the dtype's tolerance). ref2: a second eager output; if it differs from
    ref (NaN == NaN) the verdict is "nondeterministic", ok=True, not judged. index_info: leaf
    path -> (eager source tensor, dim) for index outputs, judged by the values they select.
    dtype_hint: the program's lowest floating precision (e.g. torch.float16 for a half model
    whose output is upcast); a leaf gets the wider of its own and the hint's tolerances.
    extreme_inputs: the inputs hold injected special values; positions where eager overflowed
    (non-finite, fp64 finite) are then not judged (see _judge_float).
    """
    token = _EXTREME_INPUTS.set(extreme_inputs)
    try:
        return _judge(ref, got, fp64, ref2, index_info, dtype_hint)
    finally:
        _EXTREME_INPUTS.reset(token)


def _judge(ref, got, fp64, ref2, index_info, dtype_hint) -> Verdict:
    hint = _parse_dtype(dtype_hint)
    index_info = dict(index_info or {})

    if ref2 is not None:
        diff = _bitwise_difference(ref, ref2, index_info)
        if diff is not None:
            path, why, e_abs, e_rel = diff
            return Verdict(True, NONDETERMINISTIC, e_abs, e_rel, path, f"nondeterministic, not judged: {why}")

    pairs: list = []
    bad = _pair(ref, got, "", pairs)
    if bad:
        path, why = bad
        return Verdict(False, STRUCTURE_MISMATCH, 0.0, 0.0, path, f"{path or 'output'}: structure differs: {why}")

    fp64_by_path = dict(leaves(fp64)) if fp64 is not None else {}
    max_abs = max_rel = 0.0
    failures: list[tuple[str, str]] = []
    notes: list[str] = []
    for path, r, g in pairs:
        res = _judge_leaf(path, r, g, fp64_by_path.get(path), hint, index_info.get(path))
        max_abs = max(max_abs, res.abs_err)
        max_rel = max(max_rel, res.rel_err)
        if not res.ok:
            failures.append((path, res.detail))
        elif res.note:
            notes.append(res.note)
    max_abs = max_abs if math.isfinite(max_abs) else 0.0
    max_rel = max_rel if math.isfinite(max_rel) else 0.0
    if failures:
        path, detail = failures[0]
        more = f" (+{len(failures) - 1} more failing leaves of {len(pairs)})" if len(failures) > 1 else ""
        return Verdict(False, MISMATCH, max_abs, max_rel, path, detail + more)
    detail = f"match: {len(pairs)} {'leaf agrees' if len(pairs) == 1 else 'leaves agree'}, max abs err {_fmt(max_abs)}"
    if notes:
        detail += "; " + notes[0] + (f" (+{len(notes) - 1} more)" if len(notes) > 1 else "")
    return Verdict(True, MATCH, max_abs, max_rel, None, detail)


def judge_input_set(s, ref, got, fp64, ref2, idx) -> Verdict:
    """The verdict on one input set (an oracle.inputs.InputSet): single tasks and batches judge alike."""
    return judge(ref, got, fp64, ref2=ref2, index_info=idx, extreme_inputs=s.name.startswith("special"))


def compare_eager(
    seed_ref: Any,
    variant_ref: Any,
    seed_fp64: Any = None,
    *,
    index_info: Mapping[str, tuple] | None = None,
    dtype_hint: Any = None,
) -> Verdict:
    """A rewritten program's eager output against the original's (unsound-rewrite check); the rules of judge."""
    return judge(seed_ref, variant_ref, seed_fp64, index_info=index_info, dtype_hint=dtype_hint)

"""Input sets for a program: the given inputs, fresh random ones of the same shapes, ones seeded with special values,
whole tensors near the dtype's overflow, values at the edges of ops' domains; and other memory layouts of the same values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from eqsat_test.runners.oracle.constants import INDEX_LIKE_MAX, SPECIAL_FRACTION
from eqsat_test.runners.oracle.numerics import special_values

__all__ = ["InputSet", "input_sets", "special_values", "to_fp64_inputs", "SPECIAL_FRACTION", "INDEX_LIKE_MAX",
           "KINDS", "DEFAULT_KINDS", "LAYOUTS", "DOMAIN_EDGES", "domain_values", "with_layout", "to_device_as_is"]

# The kinds of input set, in the order a task runs them (input_sets documents each).
KINDS = ("given", "random", "special", "huge", "domain")
DEFAULT_KINDS = KINDS
# Memory layouts of the same values (with_layout): the sweep's layout points (runners/checks/sweep_plan.py).
LAYOUTS = ("strided", "expanded")

# "huge": each floating data tensor's largest magnitude is 10**(u * log10(finfo.max)), u uniform in this range
# (float32: 1e30 to 1e37; float16: 6e3 to 4e4): its squares and sums of squares overflow the dtype, its
# values do not. Never above finfo.max / 4.
HUGE_EXPONENT = (0.78, 0.96)
# "huge" integers: near these powers of two (where int8/16/32 arithmetic wraps, float16/32/64 stop being
# exact, a doubling of an int64 overflows) and the dtype's max, those that fit the dtype, +- HUGE_INT_JITTER.
HUGE_INT_ANCHORS = (7, 8, 11, 15, 16, 24, 31, 32, 53, 62)
HUGE_INT_JITTER = 4
# "domain": the share of the elements of each floating data tensor set to domain edges.
DOMAIN_FRACTION = 0.5


@dataclass(frozen=True)
class DomainEdge:
    """Values at the edge of the domain (or range) of some ops, just inside and just outside it."""

    name: str
    ops: tuple[str, ...]  # the ops whose edge it is (documentation: every set holds every edge)
    why: str


DOMAIN_EDGES = (
    DomainEdge("unit", ("erfinv", "atanh", "asin", "acos", "log1p", "logit"),
               "+-1, the nearest values inside (1 - eps/2, 1 - eps, 1 - 1e-6) and outside (1 + eps)"),
    DomainEdge("one", ("acosh", "log", "log2", "log10", "pow"), "1 + eps, 1 + 2 eps, 1 + 1e-6: log's and acosh's cancellation"),
    DomainEdge("zero", ("log", "log2", "log10", "sqrt", "rsqrt", "reciprocal", "div", "xlogy", "pow", "lgamma"),
               "+-0, the smallest subnormal, smallest_normal / 2 (subnormal), smallest_normal, 1e-30, eps"),
    DomainEdge("exp", ("exp", "expm1", "exp2", "sinh", "cosh", "softplus", "softmax", "logsumexp"),
               "ln(finfo.max) rounded down and up (the last finite exp and the first inf), ln(smallest_normal) and "
               "ln(smallest subnormal) (exp's underflow), and their negatives"),
    DomainEdge("poles", ("lgamma", "digamma", "polygamma", "tan"),
               "-1, -2 and their neighbours (lgamma's and digamma's poles), pi/2 rounded down and up (tan's)"),
)


@dataclass(frozen=True)
class InputSet:
    """One set of inputs to run a program on."""

    name: str  # "given", "random-<seed>", "special-<seed>"
    inputs: tuple  # tensors (and python values passed through unchanged)


def to_fp64_inputs(inputs: Any) -> tuple:
    """Floating tensors to float64 (complex to complex128), detached with requires_grad False; the rest unchanged."""

    def conv(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if x.is_floating_point():
                return x.detach().to(torch.float64)
            if x.is_complex():
                return x.detach().to(torch.complex128)
            return x
        return _map(x, conv)

    return tuple(conv(x) for x in inputs)


def perturbed_fp64_inputs(inputs: Any, delta: float, seed: int = 0) -> tuple:
    """to_fp64_inputs, with every floating element scaled by (1 + delta * r), r uniform in [-1, 1] per
    element (continuous: two equal terms of opposite sign almost never move by the same amount)."""
    gen = torch.Generator().manual_seed(seed)

    def move(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if not (x.is_floating_point() or x.is_complex()):
                return x
            r = torch.rand(x.shape, generator=gen, dtype=torch.float64).mul_(2).sub_(1)
            return x * (1 + delta * r.to(x.device))
        return _map(x, move)

    return tuple(move(x) for x in to_fp64_inputs(inputs))


def flushed_fp64_inputs(inputs: Any, dt: torch.dtype) -> tuple | None:
    """to_fp64_inputs with every floating value below dt's smallest normal flushed to zero (sign kept),
    as a kernel that flushes subnormals (Triton's default on GPUs) reads them; None if there are none."""
    tiny, found = torch.finfo(dt).tiny, []

    def flush(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if not x.is_floating_point():
                return x
            sub = (x != 0) & (x.abs() < tiny)
            found.append(bool(sub.any()))
            return torch.where(sub, x * 0, x)
        return _map(x, flush)

    out = tuple(flush(x) for x in to_fp64_inputs(inputs))
    return out if any(found) else None


def input_sets(
    base: list | tuple,
    *,
    is_param: list[bool] | None = None,
    seed: int = 0,
    kinds: tuple[str, ...] | list[str] = ("given", "random", "special"),
) -> list[InputSet]:
    """The input sets of a program, in the order of `kinds`; every set but "given" is named "<kind>-<seed>".

    "given": base unchanged (the same objects). "random": fresh values of the same
    shapes, dtypes, devices, strides and requires_grad: floats N(0,1) scaled to the tensor's own
    std and shifted to its mean when those are finite and std is nonzero (kept non-negative if
    the tensor was), ints uniform in the tensor's observed [min, max], bools fair coin flips.
    "special": the random values, with about SPECIAL_FRACTION of the elements of each
    non-parameter tensor replaced by special_values(dtype) (index-like int tensors: the ends of
    their observed range). "huge": every floating non-parameter tensor is its random values scaled
    so that its largest magnitude is near the dtype's overflow (HUGE_EXPONENT: float32 1e30 to 1e37)
    and finite, so that squares and sums of squares overflow in the dtype while float64 holds them;
    integer non-parameter tensors that are not index-like hold values near 2**31, 2**53, 2**62 ...
    (HUGE_INT_ANCHORS). "domain": about DOMAIN_FRACTION of the elements of each floating
    non-parameter tensor replaced by domain_values(dtype), the edges of DOMAIN_EDGES (erfinv and
    atanh near +-1, acosh near 1, log and sqrt near 0, exp near its overflow, lgamma near its poles,
    subnormals). Every set holds every edge of the table, whatever ops the program calls: the values
    of a set depend only on the inputs and the seed, so that a variant, its seed and a rebuilt set
    (a cross-device finding's inputs) see the same ones. Parameters (is_param True) keep their
    random values; index-like tensors keep theirs in "huge" and "domain". Deterministic in seed;
    the tensors of every set but "given" share their random values.
    """
    base = tuple(base)
    if is_param is None:
        is_param = [False] * len(base)
    if len(is_param) != len(base):
        raise ValueError(f"is_param has {len(is_param)} entries for {len(base)} inputs")
    out: list[InputSet] = []
    for kind in kinds:
        if kind == "given":
            out.append(InputSet("given", base))
        elif kind in KINDS:
            counter = [0]
            values = tuple(_fresh(x, seed, counter, kind=kind if not p else "random") for x, p in zip(base, is_param))
            out.append(InputSet(f"{kind}-{seed}", values))
        else:
            raise ValueError(f"unknown input set kind {kind!r} ({', '.join(KINDS)})")
    return out


def domain_values(dtype: torch.dtype) -> torch.Tensor:
    """The values of every edge of DOMAIN_EDGES in a floating dtype, as a 1-D tensor of that dtype
    (neighbours are the dtype's own: 1 - eps/2 is the float just below 1)."""
    fi = torch.finfo(dtype)

    def nxt(x: float, toward: float) -> float:
        t = torch.tensor([x], dtype=torch.float64).to(dtype)
        return float(torch.nextafter(t, torch.tensor([toward], dtype=torch.float64).to(dtype)))

    def around(x: float) -> list[float]:
        """The dtype's nearest values at or below x and above it."""
        r = float(torch.tensor([x], dtype=torch.float64).to(dtype))
        return [nxt(r, -math.inf), r] if r > x else [r, nxt(r, math.inf)]

    unit = [1.0, nxt(1.0, 0.0), 1 - fi.eps, around(1 - 1e-6)[0], nxt(1.0, 2.0)]
    one = [nxt(1.0, 2.0), nxt(nxt(1.0, 2.0), 2.0), around(1 + 1e-6)[1]]
    sub = fi.smallest_normal * fi.eps
    zero = [0.0, -0.0, sub, -sub, fi.smallest_normal / 2, -fi.smallest_normal / 2, fi.smallest_normal,
            -fi.smallest_normal, fi.eps] + ([1e-30] if 1e-30 > fi.smallest_normal else [])
    exp = around(math.log(fi.max)) + [math.log(fi.smallest_normal), math.log(sub)]
    exp += [-v for v in exp]
    poles = [-1.0, nxt(-1.0, 0.0), nxt(-1.0, -2.0), -2.0, nxt(-2.0, 0.0), nxt(-2.0, -3.0)] + around(math.pi / 2)
    vals = unit + [-v for v in unit] + one + zero + exp + poles
    return torch.tensor(vals, dtype=torch.float64).to(dtype)


def with_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """t's values in another memory layout, on t's device. "strided": not contiguous, with a storage offset
    (rank 1: every other element of a longer storage; rank >= 2: the last two dims transposed in memory and
    every other column skipped). "expanded": overlapping, the first dim of size > 1 broadcast from its first
    slice (stride 0; the values along it are all that slice's). A tensor a layout cannot change (rank 0, an
    expanded tensor with no dim of size > 1) comes back as it is."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} ({', '.join(LAYOUTS)})")
    if t.dim() == 0:
        return t
    if layout == "expanded":
        d = next((i for i, s in enumerate(t.shape) if s > 1), None)
        if d is None:
            return t
        out = t.detach().narrow(d, 0, 1).clone().expand(t.shape)
    elif t.dim() == 1:
        out = torch.empty(2 * t.shape[0] + 1, dtype=t.dtype, device=t.device)[1::2]
        out.copy_(t.detach())
    else:
        *lead, m, n = t.shape
        buf = torch.empty(*lead, n, 2 * m + 1, dtype=t.dtype, device=t.device)
        out = buf[..., 1::2].transpose(-1, -2)
        out.copy_(t.detach())
    if t.requires_grad:
        out.requires_grad_(True)
    return out


def to_device_as_is(t: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """t on `device` with its sizes, strides and storage offset unchanged (Tensor.to makes a non-dense or
    overlapping tensor contiguous)."""
    device = torch.device(device)
    if t.device == device:
        return t
    if t.numel() == 0 or t.is_contiguous():
        return t.to(device)
    extent = t.storage_offset() + 1 + sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    flat = torch.as_strided(t.detach(), (extent,), (1,), 0).to(device)
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


# ----------------------------------------------------------------------------------------------


def _map(x: Any, fn) -> Any:
    """fn over the elements of a list/tuple/dict; other values unchanged."""
    if isinstance(x, Mapping):
        return type(x)((k, fn(v)) for k, v in x.items()) if type(x) is not dict else {k: fn(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(fn(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(fn(v) for v in x)
    return x


def _generator(seed: int, n: int, stream: int) -> torch.Generator:
    """A CPU generator for tensor number n of a set: stream 0 for values, 1 for special positions."""
    mixed = (seed * 1_000_003 + n * 9_176 + stream * 7_919_31) % (2**63 - 1)
    return torch.Generator().manual_seed(mixed)


def _fresh(x: Any, seed: int, counter: list[int], *, kind: str) -> Any:
    if not isinstance(x, torch.Tensor):
        return _map(x, lambda v: _fresh(v, seed, counter, kind=kind))
    n = counter[0]
    counter[0] += 1
    t = x.detach()
    gen = _generator(seed, n, 0)
    if t.numel() == 0:
        values = t.cpu().clone()
    elif t.dtype == torch.bool:
        values = torch.rand(t.shape, generator=gen) < 0.5
    elif t.is_floating_point() or t.is_complex():
        values = _random_float(t, gen)
    else:
        values = _random_int(t, gen)
    if t.numel() > 0 and t.dtype != torch.bool:
        if kind == "special":
            values = _with_specials(t, values, _generator(seed, n, 1))
        elif kind == "huge":
            values = _huge(t, values, _generator(seed, n, 2))
        elif kind == "domain" and (t.is_floating_point() or t.is_complex()):
            values = _with_domain_edges(t, values, _generator(seed, n, 3))
    out = torch.empty_like(t)  # keeps device and (dense) strides
    out.copy_(values.to(t.dtype))
    if x.requires_grad:
        out.requires_grad_(True)
    return out


def _float_stats(t: torch.Tensor) -> tuple[float, float, bool]:
    """mean, std (population) and non-negativity of the finite values of a real tensor."""
    v = t.to(torch.float64)
    v = v[torch.isfinite(v)]
    if v.numel() == 0:
        return math.nan, math.nan, False
    mean = float(v.mean())
    std = float(v.std(correction=0)) if v.numel() > 1 else 0.0
    return mean, std, bool((v >= 0).all())


def _random_float(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    work = torch.float64 if t.dtype in (torch.float64, torch.complex128) else torch.float32
    if t.is_complex():
        parts = torch.view_as_real(t.resolve_conj()).cpu()
        re = _random_real(parts[..., 0], gen, work)
        im = _random_real(parts[..., 1], gen, work)
        return torch.complex(re, im)
    return _random_real(t.cpu(), gen, work)


def _random_real(t: torch.Tensor, gen: torch.Generator, work: torch.dtype) -> torch.Tensor:
    z = torch.randn(t.shape, generator=gen, dtype=work)
    mean, std, nonneg = _float_stats(t)
    if math.isfinite(mean) and math.isfinite(std) and std > 0:
        z = z * std + mean
    if nonneg:
        z = z.abs()
    return z


def _int_profile(t: torch.Tensor) -> tuple[int, int, int | None, float]:
    """(lo, hi, sentinel, sentinel fraction): observed range of the values other than a single
    negative sentinel value (like ignore_index=-100), when there is exactly one such value."""
    v = t.cpu().to(torch.int64) if t.dtype != torch.uint64 else t.cpu()
    lo, hi = int(v.min()), int(v.max())
    if lo < 0 <= hi:
        neg = v[v < 0].unique()
        if neg.numel() == 1:
            s = int(neg[0])
            rest = v[v >= 0]
            return int(rest.min()), int(rest.max()), s, float((v == s).double().mean())
    return lo, hi, None, 0.0


def _randint(lo: int, hi: int, shape: torch.Size, gen: torch.Generator) -> torch.Tensor:
    """Uniform integers in [lo, hi] (inclusive) as int64."""
    if hi < 2**63 - 1:
        return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64)
    return torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64)  # hi itself excluded


def _random_int(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    lo, hi, sentinel, frac = _int_profile(t)
    values = _randint(lo, hi, t.shape, gen)
    if sentinel is not None:
        values = torch.where(torch.rand(t.shape, generator=gen) < frac, sentinel, values)
    return values


def _is_index_like(t: torch.Tensor) -> bool:
    lo, hi, _, _ = _int_profile(t)
    return lo >= 0 and hi < INDEX_LIKE_MAX


def _with_specials(t: torch.Tensor, values: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Replace about SPECIAL_FRACTION of the elements (at least one) with special values."""
    n = t.numel()
    mask = torch.rand(t.shape, generator=gen) < SPECIAL_FRACTION
    if not bool(mask.any()):
        pos = int(torch.randint(0, n, (1,), generator=gen))
        mask.view(-1)[pos] = True
    if t.is_floating_point() or t.is_complex():
        pool = special_values(t.dtype).cpu()
        pool = pool.to(values.dtype)
    elif _is_index_like(t):
        lo, hi, sentinel, _ = _int_profile(t)
        pool = torch.tensor(sorted({lo, hi} | ({sentinel} if sentinel is not None else set())), dtype=torch.int64)
    else:
        pool = special_values(t.dtype).cpu()
        pool = pool if t.dtype == torch.uint64 else pool.to(torch.int64)
        values = values.to(pool.dtype)
    pick = torch.randint(0, pool.numel(), t.shape, generator=gen)
    return torch.where(mask, pool[pick], values)


def _huge(t: torch.Tensor, values: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """The values of a "huge" set: floats scaled to a largest magnitude near the overflow, integers near
    HUGE_INT_ANCHORS (index-like integer tensors unchanged)."""
    if t.is_floating_point() or t.is_complex():
        fi = torch.finfo(t.dtype)
        top = math.log10(fi.max)
        lo, hi = HUGE_EXPONENT[0] * top, min(HUGE_EXPONENT[1] * top, math.log10(fi.max / 4))
        peak = 10 ** (lo + (hi - lo) * float(torch.rand((), generator=gen, dtype=torch.float64)))
        v = values.to(torch.complex128 if values.is_complex() else torch.float64)
        m = float(v.abs().max())
        if not math.isfinite(m) or m == 0:
            v, m = torch.ones_like(v), 1.0
        return v * (peak / m)
    if _is_index_like(t):
        return values
    ii = torch.iinfo(t.dtype)
    anchors = sorted({2**k for k in HUGE_INT_ANCHORS if 2**k <= ii.max} | {ii.max})
    pool = torch.tensor(anchors, dtype=torch.float64 if t.dtype == torch.uint64 else torch.int64)
    pick = pool[torch.randint(0, len(anchors), t.shape, generator=gen)]
    jitter = torch.randint(-HUGE_INT_JITTER, HUGE_INT_JITTER + 1, t.shape, generator=gen).to(pick.dtype)
    v = pick + jitter
    if ii.min < 0:
        v = torch.where(torch.rand(t.shape, generator=gen) < 0.5, -v, v)
    return v.clamp(ii.min, ii.max)


def _with_domain_edges(t: torch.Tensor, values: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """About DOMAIN_FRACTION of the elements (at least one) set to domain_values(dtype), complex: their real parts."""
    mask = torch.rand(t.shape, generator=gen) < DOMAIN_FRACTION
    if not bool(mask.any()):
        mask.view(-1)[int(torch.randint(0, t.numel(), (1,), generator=gen))] = True
    pool = domain_values(t.real.dtype if t.is_complex() else t.dtype).to(torch.float64)
    edge = pool[torch.randint(0, pool.numel(), t.shape, generator=gen)]
    return torch.where(mask, edge.to(values.dtype), values)

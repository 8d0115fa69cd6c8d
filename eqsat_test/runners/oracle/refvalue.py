"""The referee's values: NumPy arrays tagged with the torch dtype they stand for, PyTorch's type promotion written out, and rounding to a dtype (no ATen kernel computes any of it)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16, torch.uint32, torch.uint64)
_BITS = {torch.uint8: 8, torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64,
         torch.uint16: 16, torch.uint32: 32, torch.uint64: 64}
_SIGNED = {torch.int8, torch.int16, torch.int32, torch.int64}


class RefRejected(Exception):
    """The op's definition rejects the program (a float alpha on integers: torch.add's rule)."""


class RefUndefined(Exception):
    """The program's value is not defined by the ops' definitions (NaN or out-of-range floats converted
    to integers, undefined in C++), or the referee cannot compute it (size, an op without a reference)."""


@dataclass
class V:
    """A reference value: `a` holds bools, exact integers (int64, wrapped to the dtype's width) or
    floats in the working precision; `dtype` is the torch dtype the program gives it."""

    a: np.ndarray
    dtype: torch.dtype

    @property
    def shape(self) -> tuple:
        return tuple(self.a.shape)

    @property
    def ndim(self) -> int:
        return self.a.ndim


@dataclass(frozen=True)
class Ctx:
    """How one pass of the referee computes: `work` is the float working precision (float64, or the
    80-bit long double for programs that hold float64); `rounded`: each op's floating result is rounded
    to its dtype (IEEE semantics op by op) or kept in the working precision (the real-number value)."""

    work: type
    rounded: bool


def is_float(dt: torch.dtype) -> bool:
    return dt in FLOATS


def is_int(dt: torch.dtype) -> bool:
    return dt in INTS


def category(dt: torch.dtype | None) -> int:
    """0 bool, 1 integer, 2 floating, 3 complex (PyTorch's promotion categories)."""
    if dt is None:
        return -1
    if dt == torch.bool:
        return 0
    if dt.is_complex:
        return 3
    return 2 if dt.is_floating_point else 1


def _promote(a: torch.dtype | None, b: torch.dtype | None) -> torch.dtype | None:
    if a is None:
        return b
    if b is None:
        return a
    return torch.promote_types(a, b)  # the documented promotion lattice (a table, not a kernel)


def _combine(higher: torch.dtype | None, lower: torch.dtype | None) -> torch.dtype | None:
    """c10's combine_categories: a participant of lower priority (zero-dim tensor, Python number)
    changes the result only when its category is higher."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if category(higher) == 3:
        return higher
    if category(lower) == 3:
        return torch.promote_types(higher, torch.complex64) if category(higher) == 2 else lower
    if category(higher) == 2:
        return higher
    if higher == torch.bool or category(lower) == 2:
        return _promote(higher, lower)
    return higher


def result_type(*operands) -> torch.dtype:
    """torch.result_type over tensors (V), zero-dim tensors and Python numbers, written out: dimensioned
    tensors first, then zero-dim tensors, then Python numbers (a float number is the default dtype)."""
    dim = zero = wrapped = None
    for o in operands:
        if isinstance(o, V):
            if o.ndim > 0:
                dim = _promote(dim, o.dtype)
            else:
                zero = _promote(zero, o.dtype)
        elif isinstance(o, bool):
            wrapped = _promote(wrapped, torch.bool)
        elif isinstance(o, int):
            wrapped = _promote(wrapped, torch.int64)
        elif isinstance(o, float):
            wrapped = _promote(wrapped, torch.get_default_dtype())
        elif isinstance(o, complex):
            wrapped = _promote(wrapped, torch.complex64)
    out = _combine(dim, _combine(zero, wrapped))
    if out is None:
        raise RefUndefined("no operand to promote")
    return out


def float_of(dt: torch.dtype) -> torch.dtype:
    """The dtype a floating op gives for an input of dtype `dt` (integers and bools: the default dtype)."""
    return dt if is_float(dt) else torch.get_default_dtype()


def eps(dt: torch.dtype) -> float:
    return float(torch.finfo(dt).eps)


def wrap(a: np.ndarray, dt: torch.dtype) -> np.ndarray:
    """Integers modulo 2^bits of `dt`, two's complement for signed dtypes (PyTorch's integer arithmetic)."""
    a = np.asarray(a).astype(np.int64)
    bits = _BITS[dt]
    if bits == 64:
        return a
    m = np.int64((1 << bits) - 1)
    u = a & m
    if dt in _SIGNED:
        u = np.where(u >= (1 << (bits - 1)), u - (1 << bits), u)
    return u.astype(np.int64)


def round_to(a: np.ndarray, dt: torch.dtype, work: type) -> np.ndarray:
    """Round working-precision floats to dtype `dt` (round to nearest even; overflow to +-inf), back in `work`."""
    a = np.asarray(a, dtype=work)
    with np.errstate(all="ignore"):
        if dt == torch.float64:
            return a.astype(np.float64).astype(work)
        if dt == torch.float32:
            return a.astype(np.float32).astype(work)
        if dt == torch.float16:
            return a.astype(np.float64).astype(np.float16).astype(work)
        if dt == torch.bfloat16:
            f = a.astype(np.float32)
            bits = f.view(np.uint32).astype(np.uint64)
            nan = np.isnan(f)
            rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
            out = rounded.astype(np.uint32).view(np.float32)
            return np.where(nan, np.float32("nan"), out).astype(work)
    raise RefUndefined(f"no rounding to {dt}")


def to_int(a: np.ndarray, dt: torch.dtype, work: type) -> np.ndarray:
    """Floats converted to integer dtype `dt`: truncation toward zero; NaN, infinities and values out of
    the dtype's range are undefined in C++ (RefUndefined)."""
    a = np.asarray(a, dtype=work)
    info = torch.iinfo(dt)
    with np.errstate(all="ignore"):
        t = np.trunc(a)
        bad = ~np.isfinite(t) | (t < info.min) | (t > info.max)
    if bool(bad.any()):
        raise RefUndefined(f"a conversion of NaN, an infinity or an out-of-range value to {str(dt).removeprefix('torch.')} "
                           f"(undefined in C++)")
    return t.astype(np.int64)


def make(a, dt: torch.dtype, ctx: Ctx) -> V:
    """A value of dtype `dt` from a NumPy array in any representation: floats rounded (in a rounded pass),
    integers wrapped, bools as bools."""
    a = np.asarray(a)
    if dt == torch.bool:
        return V(a.astype(bool), dt)
    if is_int(dt):
        if a.dtype.kind == "f":
            return V(wrap(to_int(a, dt, ctx.work), dt), dt)
        return V(wrap(a, dt), dt)
    if is_float(dt):
        a = a.astype(ctx.work)
        return V(round_to(a, dt, ctx.work) if ctx.rounded else a, dt)
    raise RefUndefined(f"dtype {dt} has no reference")


def floats(x, ctx: Ctx) -> np.ndarray:
    """A value or Python number as working-precision floats (exact for integers up to the working
    precision's mantissa)."""
    if isinstance(x, V):
        return x.a.astype(ctx.work)
    return np.asarray(x, dtype=ctx.work)


def ints(x) -> np.ndarray:
    if isinstance(x, V):
        return x.a.astype(np.int64)
    return np.asarray(int(x), dtype=np.int64)


def cast(x, dt: torch.dtype, ctx: Ctx) -> V:
    """`x` (a value or a Python number) converted to dtype `dt`, as `Tensor.to` does."""
    if isinstance(x, V) and x.dtype == dt:
        return x
    if dt == torch.bool:
        return V(np.asarray(x.a if isinstance(x, V) else x) != 0, dt)
    if is_int(dt):
        if isinstance(x, V) and not is_float(x.dtype):
            return V(wrap(x.a.astype(np.int64), dt), dt)
        if not isinstance(x, V) and isinstance(x, (bool, int)):
            return V(wrap(np.asarray(int(x)), dt), dt)
        return V(wrap(to_int(floats(x, ctx), dt, ctx.work), dt), dt)
    return make(floats(x, ctx), dt, ctx)


def from_tensor(t: torch.Tensor, ctx: Ctx) -> V:
    """An input tensor as a reference value (its bits read once; bfloat16 through float32, exactly)."""
    t = t.detach().cpu()
    if t.dtype == torch.bool:
        return V(t.numpy().copy(), t.dtype)
    if is_int(t.dtype):
        return V(t.to(torch.int64).numpy().copy() if t.dtype != torch.uint64 else t.numpy().astype(np.int64), t.dtype)
    if is_float(t.dtype):
        host = t.float() if t.dtype == torch.bfloat16 else t
        return V(host.numpy().astype(ctx.work), t.dtype)
    raise RefUndefined(f"input of dtype {t.dtype}")

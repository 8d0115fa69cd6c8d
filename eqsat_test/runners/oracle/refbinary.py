"""The referee's binary and ternary pointwise ops: exact rational arithmetic for division, floor division and remainders, C99 pow with its special cases written out, exact integers, PyTorch's type promotion."""
from __future__ import annotations

import numpy as np
import torch

from eqsat_test.runners.oracle.refunary import PY_ELEMENTS, quiet_errors
from eqsat_test.runners.oracle.refvalue import (
    Ctx,
    RefRejected,
    RefUndefined,
    V,
    cast,
    float_of,
    floats,
    ints,
    is_float,
    is_int,
    make,
    result_type,
)


def check_alpha(dt: torch.dtype, alpha, what: str = "alpha") -> None:
    """torch.add's rule for its scalar factor: no float factor on integers, only a bool one on bools."""
    if alpha is None:
        return
    if (is_int(dt) or dt == torch.bool) and isinstance(alpha, float):
        raise RefRejected(f"{what} argument of type float cannot be safely cast to the integer dtype "
                          f"{str(dt).removeprefix('torch.')} (torch.add's rule)")
    if dt == torch.bool and not isinstance(alpha, bool) and alpha not in (0, 1):
        raise RefRejected(f"{what} {alpha!r} on bool tensors: only a bool {what} is defined (torch.add's rule)")
    if is_int(dt) and not isinstance(alpha, bool):
        info = torch.iinfo(dt)
        if not info.min <= int(alpha) <= info.max:
            raise RefRejected(f"{what} {alpha!r} cannot be converted to {str(dt).removeprefix('torch.')} without "
                              f"overflow (torch.add's rule)")


def add(ctx: Ctx, x, y, alpha=1) -> V:
    dt = result_type(x, y)
    check_alpha(dt, alpha)
    if dt == torch.bool:
        return V(np.asarray((ints(x) != 0) | ((ints(y) * int(alpha)) != 0)), torch.bool)
    if is_int(dt):
        return make(ints(x) + int(alpha) * ints(y), dt, ctx)
    with quiet_errors():
        return make(floats(x, ctx) + ctx.work(alpha) * floats(y, ctx), dt, ctx)


def sub(ctx: Ctx, x, y, alpha=1) -> V:
    dt = result_type(x, y)
    if dt == torch.bool:
        raise RefRejected("subtraction of bool tensors is not defined")
    check_alpha(dt, alpha)
    if is_int(dt):
        return make(ints(x) - int(alpha) * ints(y), dt, ctx)
    with quiet_errors():
        return make(floats(x, ctx) - ctx.work(alpha) * floats(y, ctx), dt, ctx)


def rsub(ctx: Ctx, x, y, alpha=1) -> V:
    return sub(ctx, y, x, alpha)


def mul(ctx: Ctx, x, y) -> V:
    dt = result_type(x, y)
    if dt == torch.bool:
        return V(np.asarray((ints(x) != 0) & (ints(y) != 0)), torch.bool)
    if is_int(dt):
        return make(ints(x) * ints(y), dt, ctx)
    with quiet_errors():
        return make(floats(x, ctx) * floats(y, ctx), dt, ctx)


def _exact(fn, a: np.ndarray, b: np.ndarray, ctx: Ctx) -> np.ndarray:
    """fn(Fraction(a), Fraction(b)) per finite element pair: exact rational arithmetic."""
    from fractions import Fraction
    a, b = np.broadcast_arrays(a, b)
    if a.size > PY_ELEMENTS:
        raise RefUndefined(f"{a.size} elements: too many for exact rational arithmetic")
    def to_float(q) -> float:
        try:
            return float(q)
        except OverflowError:  # beyond float64: the infinity of its sign
            return float("inf") if q > 0 else float("-inf")
    out = [to_float(fn(Fraction(float(u)), Fraction(float(v)))) for u, v in zip(a.reshape(-1), b.reshape(-1))]
    return np.asarray(out, dtype=ctx.work).reshape(a.shape)


def _int_div(a: np.ndarray, b: np.ndarray, mode: str) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    if bool((b == 0).any()):
        raise RefUndefined("integer division by zero")
    q = np.floor_divide(a, b)  # floor, exact on integers
    if mode == "trunc":
        q = np.where((q < 0) & (q * b != a), q + 1, q)
    return q


def floor_div_float(a: np.ndarray, b: np.ndarray, ctx: Ctx) -> np.ndarray:
    """Python's float //: the floor of the exact quotient; inf // finite is NaN; finite // inf is 0 (or -1
    where the signs differ); division by zero gives IEEE's a / b (Python raises)."""
    import math as m
    a, b = np.broadcast_arrays(a, b)
    fin = np.isfinite(a) & np.isfinite(b) & (b != 0)
    with quiet_errors():
        out = np.where(b == 0, a / b, np.nan)
        out = np.where(np.isfinite(a) & np.isinf(b),
                       np.where((a == 0) | ((a > 0) == (b > 0)), 0.0 * np.sign(a / b) + 0.0, -1.0), out)
        out = np.where(np.isfinite(a) & np.isinf(b) & (a == 0), np.copysign(0.0, a / b), out)
        if bool(fin.any()):
            ex = _exact(lambda u, v: m.floor(u / v), np.where(fin, a, 0), np.where(fin, b, 1), ctx)
            ex = np.where(ex == 0, np.copysign(0.0, a / np.where(fin, b, 1)), ex)
            out = np.where(fin, ex, out)
    return out.astype(ctx.work)


def div(ctx: Ctx, x, y, rounding_mode=None) -> V:
    dt = result_type(x, y)
    if rounding_mode is None:
        with quiet_errors():
            return make(floats(x, ctx) / floats(y, ctx), float_of(dt), ctx)
    if dt == torch.bool:
        raise RefRejected("rounded division of bool tensors")
    if is_int(dt):
        return make(_int_div(ints(cast(x, dt, ctx)), ints(cast(y, dt, ctx)), rounding_mode), dt, ctx)
    a, b = floats(cast(x, dt, ctx), ctx), floats(cast(y, dt, ctx), ctx)
    if rounding_mode == "floor":
        return make(floor_div_float(a, b, ctx), dt, ctx)
    with quiet_errors():  # trunc: the exact quotient truncated; IEEE for infinities and zero divisors
        a, b = np.broadcast_arrays(a, b)
        fin = np.isfinite(a) & np.isfinite(b) & (b != 0)
        out = np.trunc(a / b)
        if bool(fin.any()):
            import math as m
            ex = _exact(lambda u, v: m.trunc(u / v), np.where(fin, a, 0), np.where(fin, b, 1), ctx)
            out = np.where(fin, np.where(ex == 0, np.copysign(0.0, a / np.where(fin, b, 1)), ex), out)
    return make(out, dt, ctx)


def floor_divide(ctx: Ctx, x, y) -> V:
    return div(ctx, x, y, "floor")


def remainder(ctx: Ctx, x, y) -> V:
    """Python's %: a - b * floor(a / b) exactly, the sign of the divisor; a % inf is a (or inf where the
    signs differ, as Python and NumPy give); inf % b and a % 0 are NaN."""
    dt = result_type(x, y)
    if is_int(dt) or dt == torch.bool:
        a, b = np.broadcast_arrays(ints(cast(x, dt, ctx)), ints(cast(y, dt, ctx)))
        if bool((b == 0).any()):
            raise RefUndefined("integer remainder by zero")
        return make(np.remainder(a, b), dt, ctx)
    a, b = np.broadcast_arrays(floats(cast(x, dt, ctx), ctx), floats(cast(y, dt, ctx), ctx))
    fin = np.isfinite(a) & np.isfinite(b) & (b != 0)
    with quiet_errors():
        out: np.ndarray = np.full(a.shape, np.nan, dtype=ctx.work)
        binf = np.isfinite(a) & np.isinf(b)
        out = np.where(binf, np.where((a == 0) | ((a > 0) == (b > 0)), a, b), out)
        if bool(fin.any()):
            import math as m
            ex = _exact(lambda u, v: u - v * m.floor(u / v), np.where(fin, a, 0), np.where(fin, b, 1), ctx)
            out = np.where(fin, ex, out)
    return make(out, dt, ctx)


def fmod(ctx: Ctx, x, y) -> V:
    """C's fmod: exact, the sign of the dividend; fmod(inf, b) and fmod(a, 0) are NaN, fmod(a, inf) is a."""
    dt = result_type(x, y)
    if is_int(dt):
        a, b = np.broadcast_arrays(ints(cast(x, dt, ctx)), ints(cast(y, dt, ctx)))
        if bool((b == 0).any()):
            raise RefUndefined("integer fmod by zero")
        return make(np.fmod(a, b), dt, ctx)
    a, b = np.broadcast_arrays(floats(cast(x, dt, ctx), ctx), floats(cast(y, dt, ctx), ctx))
    fin = np.isfinite(a) & np.isfinite(b) & (b != 0)
    with quiet_errors():
        out = np.where(np.isfinite(a) & np.isinf(b), a, np.nan)
        if bool(fin.any()):
            ex = _exact(lambda u, v: u - v * int(u / v), np.where(fin, a, 0), np.where(fin, b, 1), ctx)
            out = np.where(fin, np.where(ex == 0, np.copysign(0.0, a), ex), out)
    return make(out, dt, ctx)


def _odd_int(y: np.ndarray) -> np.ndarray:
    with quiet_errors():
        return np.isfinite(y) & (np.floor(y) == y) & (np.fmod(y, 2) != 0)


def pow_float(x: np.ndarray, y: np.ndarray, ctx: Ctx) -> np.ndarray:
    """C99 pow (Annex F.9.4.4), special cases written out; finite x > 0 through the working precision's pow."""
    x, y = np.broadcast_arrays(np.asarray(x, dtype=ctx.work), np.asarray(y, dtype=ctx.work))
    with quiet_errors():
        odd = _odd_int(y)
        integral = np.isfinite(y) & (np.floor(y) == y)
        mag = np.power(np.abs(x), y)  # |x|^y, then the sign and the special cases
        out = np.where((x < 0) & integral & odd, -mag, mag)
        out = np.where((x < 0) & np.isfinite(x) & np.isfinite(y) & ~integral, np.nan, out)
        # x = +-0
        zero = x == 0
        out = np.where(zero & (y < 0), np.where(odd, np.copysign(np.inf, x), np.inf), out)
        out = np.where(zero & (y > 0), np.where(odd, x, 0.0), out)
        # y = +-inf
        ax = np.abs(x)
        out = np.where(y == np.inf, np.where(ax < 1, 0.0, np.where(ax > 1, np.inf, 1.0)), out)
        out = np.where(y == -np.inf, np.where(ax < 1, np.inf, np.where(ax > 1, 0.0, 1.0)), out)
        # x = -inf
        out = np.where(x == -np.inf, np.where(y < 0, np.where(odd, -0.0, 0.0), np.where(odd, -np.inf, np.inf)), out)
        out = np.where(x == np.inf, np.where(y < 0, 0.0, np.inf), out)
        # NaN in, NaN out; but pow(x, +-0) = 1 and pow(+1, y) = 1 for any x, y (NaN too)
        out = np.where(np.isnan(x) | np.isnan(y), np.nan, out)
        out = np.where((y == 0) | (x == 1), 1.0, out)
    return out.astype(ctx.work)


def pow_(ctx: Ctx, x, y) -> V:
    dt = result_type(x, y)
    if is_int(dt) or dt == torch.bool:
        a, b = np.broadcast_arrays(ints(x), ints(y))
        if bool((b < 0).any()):
            raise RefRejected("integers to negative integer powers are not allowed")
        return make(np.power(a, b), dt, ctx)  # int64 power wraps modulo 2^64; the dtype's width below it
    return make(pow_float(floats(x, ctx), floats(y, ctx), ctx), dt, ctx)


def _minmax(np_fn, nan_wins: bool):
    def impl(ctx: Ctx, x, y) -> V:
        dt = result_type(x, y)
        if not is_float(dt):
            return make(np_fn(ints(cast(x, dt, ctx)), ints(cast(y, dt, ctx))), dt, ctx)
        a, b = floats(x, ctx), floats(y, ctx)
        with quiet_errors():
            out = np_fn(a, b)
            if not nan_wins:  # fmax/fmin: a NaN operand yields the other
                out = np.where(np.isnan(a), b, np.where(np.isnan(b), a, out))
        return make(out, dt, ctx)
    return impl


maximum, minimum = _minmax(np.maximum, True), _minmax(np.minimum, True)
fmax, fmin = _minmax(np.fmax, False), _minmax(np.fmin, False)


def _float_binary(fn):
    def impl(ctx: Ctx, x, y) -> V:
        dt = float_of(result_type(x, y))
        with quiet_errors():
            return make(fn(floats(x, ctx), floats(y, ctx), ctx), dt, ctx)
    return impl


def _logaddexp(a, b, ctx, base2=False):
    m = np.maximum(a, b)
    d = -np.abs(a - b)
    if base2:
        out = m + np.log1p(np.exp2(d)) / np.log(ctx.work(2))
    else:
        out = m + np.log1p(np.exp(d))
    out = np.where((a == b) & np.isinf(a), a, out)  # both -inf: -inf; both +inf: +inf
    return np.where(np.isnan(a) | np.isnan(b), np.nan, out)


def _xlogy(x, y, ctx):
    return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


BINARY_FLOAT = {
    "atan2": _float_binary(lambda a, b, c: np.arctan2(a, b)), "hypot": _float_binary(lambda a, b, c: np.hypot(a, b)),
    "copysign": _float_binary(lambda a, b, c: np.copysign(a, b)),
    "logaddexp": _float_binary(lambda a, b, c: _logaddexp(a, b, c)),
    "logaddexp2": _float_binary(lambda a, b, c: _logaddexp(a, b, c, base2=True)),
    "xlogy": _float_binary(_xlogy), "nextafter": _float_binary(lambda a, b, c: np.nextafter(a.astype(np.float64), b.astype(np.float64))),
}


def compare(op: str):
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
          "ge": np.greater_equal}[op]

    def impl(ctx: Ctx, x, y) -> V:
        dt = result_type(x, y)
        if is_float(dt):
            a = floats(cast(x, dt, ctx), ctx) if isinstance(x, V) else floats(x, ctx)
            b = floats(cast(y, dt, ctx), ctx) if isinstance(y, V) else floats(y, ctx)
        else:  # integers compare exactly, a Python number as it is (not wrapped to the tensor's width)
            a = ints(cast(x, dt, ctx)) if isinstance(x, V) else np.asarray(x)
            b = ints(cast(y, dt, ctx)) if isinstance(y, V) else np.asarray(y)
        return V(np.asarray(fn(a, b)), torch.bool)
    return impl


def logical(op: str):
    fn = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op]

    def impl(ctx: Ctx, x, y) -> V:
        a = (x.a != 0) if isinstance(x, V) else np.asarray(bool(x))
        b = (y.a != 0) if isinstance(y, V) else np.asarray(bool(y))
        return V(np.asarray(fn(a, b)), torch.bool)
    return impl


def bitwise(op: str):
    def impl(ctx: Ctx, x, y) -> V:
        dt = result_type(x, y)
        if is_float(dt):
            raise RefRejected(f"bitwise {op} of floating tensors")
        a, b = np.broadcast_arrays(ints(cast(x, dt, ctx)), ints(cast(y, dt, ctx)))
        if op in ("and", "or", "xor"):
            out = {"and": a & b, "or": a | b, "xor": a ^ b}[op]
            return V(out != 0, dt) if dt == torch.bool else make(out, dt, ctx)
        bits = torch.iinfo(dt).bits
        if bool(((b < 0) | (b >= bits)).any()):
            raise RefUndefined(f"a shift by a negative amount or by {bits} bits or more (undefined in C++)")
        return make(np.left_shift(a, b) if op == "left_shift" else np.right_shift(a, b), dt, ctx)
    return impl


def where(ctx: Ctx, cond: V, x, y) -> V:
    dt = result_type(x, y)
    a, b = cast(x, dt, ctx), cast(y, dt, ctx)
    return V(np.where(cond.a != 0, a.a, b.a), dt)


def lerp(ctx: Ctx, x: V, y: V, w) -> V:
    dt = result_type(x, y, w) if isinstance(w, V) else result_type(x, y)
    with quiet_errors():
        a, b, t = floats(x, ctx), floats(y, ctx), floats(w, ctx)
        return make(a + t * (b - a), dt, ctx)


def addcmul(ctx: Ctx, s: V, t1: V, t2: V, value=1) -> V:
    dt = result_type(s, t1, t2)
    check_alpha(dt, value, "value")
    if is_int(dt):
        return make(ints(s) + int(value) * ints(t1) * ints(t2), dt, ctx)
    with quiet_errors():
        return make(floats(s, ctx) + ctx.work(value) * floats(t1, ctx) * floats(t2, ctx), dt, ctx)


def addcdiv(ctx: Ctx, s: V, t1: V, t2: V, value=1) -> V:
    dt = result_type(s, t1, t2)
    if not is_float(dt) or not (is_float(t1.dtype) or is_float(t2.dtype)):
        raise RefRejected("integer division in addcdiv is not defined")
    with quiet_errors():
        return make(floats(s, ctx) + ctx.work(value) * floats(t1, ctx) / floats(t2, ctx), dt, ctx)


def heaviside(ctx: Ctx, x: V, values: V) -> V:
    dt = result_type(x, values)
    a, v = floats(x, ctx), floats(values, ctx)
    with quiet_errors():
        return make(np.where(np.isnan(a), np.nan, np.where(a == 0, v, (a > 0).astype(ctx.work))), dt, ctx)

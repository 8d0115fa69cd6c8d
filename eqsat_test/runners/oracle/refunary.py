"""The referee's unary pointwise ops: each op's mathematical definition in the working precision (NumPy, Python math, mpmath), exact integer arithmetic, and the IEEE 754 / C99 Annex F special cases written out."""
from __future__ import annotations

import math

import numpy as np
import torch

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
    wrap,
)

# Functions evaluated one element at a time in Python (math, mpmath) take at most this many elements.
PY_ELEMENTS = 1 << 18

_INF, _NAN = float("inf"), float("nan")


def quiet_errors():
    return np.errstate(all="ignore")


def _py(fn, a: np.ndarray, ctx: Ctx) -> np.ndarray:
    """fn applied to each element in Python: math's double functions for a float64 working precision,
    mpmath at 80 bits for the long double one."""
    if a.size > PY_ELEMENTS:
        raise RefUndefined(f"{a.size} elements: too many for a reference evaluated element by element")
    if ctx.work is np.float64:
        out = [fn(float(v)) for v in a.reshape(-1)]
        return np.asarray(out, dtype=np.float64).reshape(a.shape)
    import mpmath  # the long double pass only (float64 programs)
    with mpmath.workprec(80):
        out = [float(fn(mpmath.mpf(float(v)))) if math.isfinite(float(v)) else fn(float(v)) for v in a.reshape(-1)]
    return np.asarray(out, dtype=ctx.work).reshape(a.shape)


def _guard(fn, nan_ok=_NAN):
    """A math function with C99's special values: NaN in gives NaN, a domain error gives NaN, an
    overflow gives the infinity of the right sign (math raises instead)."""
    def g(v):
        if v != v:
            return _NAN
        try:
            return fn(v)
        except ValueError:
            return nan_ok
        except OverflowError:
            return math.copysign(_INF, v) if fn is not math.cosh else _INF
    return g


# ---- unary floating ops (an integer or bool input gives the default dtype) -----------------------

def _unary(compute):
    def impl(ctx: Ctx, x: V, *args, **kwargs) -> V:
        with quiet_errors():
            out = compute(floats(x, ctx), ctx, *args, **kwargs)
        return make(out, float_of(x.dtype), ctx)
    return impl


def _erf(a, ctx):
    import mpmath
    return _py(_guard(math.erf) if ctx.work is np.float64 else (lambda v: mpmath.erf(v) if isinstance(v, mpmath.mpf)
                                                                else math.erf(v)), a, ctx)


def _erfc(a, ctx):
    import mpmath
    return _py(_guard(math.erfc) if ctx.work is np.float64 else (lambda v: mpmath.erfc(v) if isinstance(v, mpmath.mpf)
                                                                 else math.erfc(v)), a, ctx)


def _erfinv_one(v):
    import mpmath
    v = float(v)
    if v != v or abs(v) > 1:
        return _NAN
    if abs(v) == 1:
        return math.copysign(_INF, v)
    if v == 0:
        return v  # keeps the sign of zero
    return float(mpmath.erfinv(v))


def _lgamma_one(v):
    if v != v:
        return _NAN
    if math.isinf(v):
        return _INF
    if v <= 0 and v == math.floor(v):
        return _INF  # the poles
    return math.lgamma(v)


def _digamma_one(v):
    import mpmath
    if v != v or v == -_INF:
        return _NAN
    if v == _INF:
        return _INF
    if v == 0:
        return -math.copysign(_INF, v)  # -inf at +0, +inf at -0 (the limits from each side)
    if v < 0 and v == math.floor(v):
        return _NAN
    return float(mpmath.digamma(v))


def _gelu(a, ctx, approximate="none"):
    if approximate == "tanh":
        inner = np.sqrt(ctx.work(2.0) / ctx.work(math.pi)) * (a + ctx.work(0.044715) * a * a * a)
        out = ctx.work(0.5) * a * (1 + np.tanh(inner))
    else:
        out = ctx.work(0.5) * a * (1 + _erf(a / np.sqrt(ctx.work(2.0)), ctx))
    # the limits at the infinities: gelu(+inf) = +inf, gelu(-inf) = -0 (x * Phi(x) -> 0)
    return np.where(a == np.inf, np.inf, np.where(a == -np.inf, -0.0, out))


def _sigmoid(a, ctx):
    return 1 / (1 + np.exp(-a))


def _silu(a, ctx):
    return np.where(a == -np.inf, -0.0, a * _sigmoid(a, ctx))


def _softplus(a, ctx, beta=1.0, threshold=20.0):
    # ATen's definition: x where beta * x > threshold (documented), else log1p(exp(beta x)) / beta
    bx = a * ctx.work(beta)
    return np.where(bx > threshold, a, np.log1p(np.exp(bx)) / ctx.work(beta))


def _mish(a, ctx):
    sp = np.where(a > 20, a, np.log1p(np.exp(a)))
    return np.where(a == -np.inf, -0.0, a * np.tanh(sp))


def _elu(a, ctx, alpha=1.0, scale=1.0, input_scale=1.0):
    neg = ctx.work(alpha) * np.expm1(a * ctx.work(input_scale))
    return ctx.work(scale) * np.where(a > 0, a, np.where(a == 0, a, neg))


def _logit(a, ctx, eps=None):
    if eps is not None:
        a = np.clip(a, ctx.work(eps), 1 - ctx.work(eps))
    return np.log(a / (1 - a))


def _sinc(a, ctx):
    pa = a * ctx.work(math.pi)
    return np.where(a == 0, ctx.work(1), np.sin(pa) / pa)


def _rsqrt(a, ctx):
    # IEEE 754 rSqrt: rsqrt(-0) = -inf, rsqrt(+0) = +inf, rsqrt(+inf) = +0, rsqrt(x < 0) = NaN
    return 1 / np.sqrt(a)


def _hardswish(a, ctx):
    return a * np.clip(a + 3, 0, 6) / 6


def _hardsigmoid(a, ctx):
    return np.clip(a + 3, 0, 6) / 6


def _frac(a, ctx):
    return a - np.trunc(a)  # the documented definition: inf gives NaN


UNARY_FLOAT = {
    "exp": _unary(lambda a, c: np.exp(a)), "exp2": _unary(lambda a, c: np.exp2(a)),
    "expm1": _unary(lambda a, c: np.expm1(a)), "log": _unary(lambda a, c: np.log(a)),
    "log2": _unary(lambda a, c: np.log2(a)), "log10": _unary(lambda a, c: np.log10(a)),
    "log1p": _unary(lambda a, c: np.log1p(a)), "sqrt": _unary(lambda a, c: np.sqrt(a)),
    "rsqrt": _unary(_rsqrt), "sin": _unary(lambda a, c: np.sin(a)), "cos": _unary(lambda a, c: np.cos(a)),
    "tan": _unary(lambda a, c: np.tan(a)), "asin": _unary(lambda a, c: np.arcsin(a)),
    "acos": _unary(lambda a, c: np.arccos(a)), "atan": _unary(lambda a, c: np.arctan(a)),
    "sinh": _unary(lambda a, c: np.sinh(a)), "cosh": _unary(lambda a, c: np.cosh(a)),
    "tanh": _unary(lambda a, c: np.tanh(a)), "asinh": _unary(lambda a, c: np.arcsinh(a)),
    "acosh": _unary(lambda a, c: np.arccosh(a)), "atanh": _unary(lambda a, c: np.arctanh(a)),
    "erf": _unary(_erf), "erfc": _unary(_erfc), "erfinv": _unary(lambda a, c: _py(_erfinv_one, a, c)),
    "lgamma": _unary(lambda a, c: _py(_lgamma_one, a, c)), "digamma": _unary(lambda a, c: _py(_digamma_one, a, c)),
    "sigmoid": _unary(_sigmoid), "reciprocal": _unary(lambda a, c: 1 / a), "sinc": _unary(_sinc),
    "logit": _unary(_logit), "gelu": _unary(_gelu), "silu": _unary(_silu), "softplus": _unary(_softplus),
    "mish": _unary(_mish), "elu": _unary(_elu), "hardswish": _unary(_hardswish), "hardsigmoid": _unary(_hardsigmoid),
    "frac": _unary(_frac),
}


def log_sigmoid_forward(ctx: Ctx, x: V) -> tuple:
    with quiet_errors():
        a = floats(x, ctx)
        out = np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))
    return make(out, float_of(x.dtype), ctx), make(np.zeros(0), float_of(x.dtype), ctx)


def selu(ctx: Ctx, x: V) -> V:
    return UNARY_FLOAT["elu"](ctx, x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def celu(ctx: Ctx, x: V, alpha=1.0) -> V:
    return UNARY_FLOAT["elu"](ctx, x, alpha, 1.0, 1.0 / alpha)


# ---- unary ops that keep the dtype ------------------------------------------------------------------

def _keep(fn_float, fn_int=None, fn_bool=None):
    def impl(ctx: Ctx, x: V, *args, **kwargs) -> V:
        with quiet_errors():
            if is_float(x.dtype):
                return make(fn_float(x.a, ctx, *args, **kwargs), x.dtype, ctx)
            if x.dtype == torch.bool:
                if fn_bool is None:
                    raise RefRejected("not defined for bool tensors")
                return V(np.asarray(fn_bool(x.a)), torch.bool)
            return V(wrap((fn_int or fn_float)(x.a, ctx, *args, **kwargs), x.dtype), x.dtype)
    return impl


def _sign(a, ctx):
    if a.dtype.kind == "f":
        return np.where(np.isnan(a), 0.0, np.sign(a)) + 0.0  # sign(NaN) is 0 in PyTorch (documented); +0 for 0
    return np.sign(a)


def _round(a, ctx, decimals=0):
    if a.dtype.kind != "f":
        return a
    if decimals == 0:
        return np.rint(a)  # half to even
    p = ctx.work(10.0) ** decimals
    return np.rint(a * p) / p  # the documented definition (x * 10^d rounded, then divided)


UNARY_KEEP = {
    "abs": _keep(lambda a, c: np.abs(a), fn_bool=lambda a: a),
    "neg": _keep(lambda a, c: -a),
    "sign": _keep(_sign, fn_bool=lambda a: a), "sgn": _keep(_sign, fn_bool=lambda a: a),
    "ceil": _keep(lambda a, c: np.ceil(a) if a.dtype.kind == "f" else a, fn_bool=lambda a: a),
    "floor": _keep(lambda a, c: np.floor(a) if a.dtype.kind == "f" else a, fn_bool=lambda a: a),
    "trunc": _keep(lambda a, c: np.trunc(a) if a.dtype.kind == "f" else a, fn_bool=lambda a: a),
    "round": _keep(_round, fn_bool=lambda a: a),
    "relu": _keep(lambda a, c: np.where(a > 0, a, np.where(np.isnan(a) if a.dtype.kind == "f" else False, a, 0 * a))),
    "bitwise_not": _keep(lambda a, c: None, fn_int=lambda a, c: ~a, fn_bool=lambda a: ~a),
}


def bitwise_not(ctx: Ctx, x: V) -> V:
    if is_float(x.dtype):
        raise RefRejected("bitwise_not of a floating tensor")
    return UNARY_KEEP["bitwise_not"](ctx, x)


def predicate(name: str):
    def impl(ctx: Ctx, x: V) -> V:
        a = x.a
        if not is_float(x.dtype):
            val = {"isnan": False, "isinf": False, "isfinite": True, "isposinf": False, "isneginf": False,
                   "signbit": None}[name]
            if val is None:
                return V(a < 0, torch.bool)
            return V(np.full(a.shape, val), torch.bool)
        fn = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "isposinf": lambda t: t == np.inf,
              "isneginf": lambda t: t == -np.inf, "signbit": np.signbit}[name]
        return V(np.asarray(fn(a)), torch.bool)
    return impl


def logical_not(ctx: Ctx, x: V) -> V:
    return V(np.asarray(x.a == 0), torch.bool)


def nan_to_num(ctx: Ctx, x: V, nan=None, posinf=None, neginf=None) -> V:
    if not is_float(x.dtype):
        return x
    fi = torch.finfo(x.dtype)
    a = x.a
    out = np.where(np.isnan(a), 0.0 if nan is None else nan,
                   np.where(a == np.inf, fi.max if posinf is None else posinf,
                            np.where(a == -np.inf, fi.min if neginf is None else neginf, a)))
    return make(out, x.dtype, ctx)


def clamp(ctx: Ctx, x: V, lo=None, hi=None) -> V:
    dt = result_type(*[o for o in (x, lo, hi) if o is not None])
    if is_int(dt) and any(isinstance(o, float) for o in (lo, hi)):
        dt = result_type(x, *[o for o in (lo, hi) if o is not None])
    with quiet_errors():
        if is_float(dt):
            a = floats(x, ctx)
            # clamp propagates NaN of x and of the bounds; max(min) order as documented: min(max(x, lo), hi)
            if lo is not None:
                b = floats(lo, ctx)
                a = np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b))
            if hi is not None:
                b = floats(hi, ctx)
                a = np.where(np.isnan(a) | np.isnan(b), np.nan, np.minimum(a, b))
            return make(a, dt, ctx)
        a = ints(cast(x, dt, ctx))
        if lo is not None:
            a = np.maximum(a, ints(cast(lo, dt, ctx)))
        if hi is not None:
            a = np.minimum(a, ints(cast(hi, dt, ctx)))
        return make(a, dt, ctx)


def clamp_max(ctx: Ctx, x: V, hi) -> V:
    return clamp(ctx, x, None, hi)


def hardtanh(ctx: Ctx, x: V, lo=-1.0, hi=1.0) -> V:
    if is_float(x.dtype):
        return clamp(ctx, x, float(lo), float(hi))
    return V(wrap(np.clip(x.a, int(math.ceil(lo)), int(math.floor(hi))), x.dtype), x.dtype)


def threshold(ctx: Ctx, x: V, th, value) -> V:
    """y = x where x > threshold, else value, in x's dtype (the value converted to it)."""
    keep = (floats(x, ctx) > floats(th, ctx)) if is_float(x.dtype) or isinstance(th, float) else (x.a > int(th))
    if is_float(x.dtype):
        return make(np.where(keep, x.a, floats(value, ctx)), x.dtype, ctx)
    v = cast(value, x.dtype, ctx)
    return V(np.where(keep, x.a, v.a), x.dtype)


def leaky_relu(ctx: Ctx, x: V, slope=0.01) -> V:
    with quiet_errors():
        a = floats(x, ctx)
        return make(np.where(a > 0, a, a * ctx.work(slope)), float_of(x.dtype), ctx)



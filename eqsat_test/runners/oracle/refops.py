"""The referee's reductions, normalizations and matrix products: each op's definition evaluated in the working precision with NumPy (floats) or exactly (integers, modulo the dtype's width)."""
from __future__ import annotations

import numpy as np
import torch

from eqsat_test.runners.oracle.refunary import quiet_errors
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
)


def dims(x: V, dim) -> tuple:
    """A dim argument (int, list, None or []) as a tuple of non-negative axes; None and [] mean every axis."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(x.ndim))
    if isinstance(dim, int):
        dim = [dim]
    nd = max(x.ndim, 1)
    return tuple(sorted({d % nd for d in dim})) if x.ndim else ()


def _acc_dtype(x: V, dtype) -> torch.dtype:
    """sum/prod's result dtype: `dtype` if given, int64 for integers and bools, else the input's."""
    if dtype is not None:
        return dtype
    return torch.int64 if (is_int(x.dtype) or x.dtype == torch.bool) else x.dtype


def _accumulate(fn, ctx: Ctx, x: V, dim, keepdim, dtype) -> V:
    """np.sum or np.prod over `dim` in the accumulation dtype: the working precision, or exact integers."""
    dt = _acc_dtype(x, dtype)
    axes = dims(x, dim)
    if is_float(dt):
        with quiet_errors():
            return make(fn(floats(x, ctx), axis=axes, keepdims=keepdim), dt, ctx)
    return make(fn(ints(cast(x, dt, ctx)), axis=axes, keepdims=keepdim), dt, ctx)


def sum_(ctx: Ctx, x: V, dim=None, keepdim=False, dtype=None) -> V:
    return _accumulate(np.sum, ctx, x, dim, keepdim, dtype)


def prod(ctx: Ctx, x: V, dim=None, keepdim=False, dtype=None) -> V:
    return _accumulate(np.prod, ctx, x, dim, keepdim, dtype)


def mean(ctx: Ctx, x: V, dim=None, keepdim=False, dtype=None) -> V:
    dt = dtype or x.dtype
    if not is_float(dt):
        raise RefRejected("mean of an integer tensor (needs a floating dtype)")
    with quiet_errors():
        return make(np.mean(floats(x, ctx), axis=dims(x, dim), keepdims=keepdim), dt, ctx)


def _ext(np_fn):
    def impl(ctx: Ctx, x: V, dim=None, keepdim=False) -> V:
        axes = dims(x, dim)
        if x.a.size == 0:
            raise RefRejected("max/min of an empty tensor")
        with quiet_errors():
            return V(np_fn(x.a, axis=axes, keepdims=keepdim), x.dtype)  # NaN propagates (np.max/np.min)
    return impl


amax, amin = _ext(np.max), _ext(np.min)


def _arg(np_fn):
    def impl(ctx: Ctx, x: V, dim=None, keepdim=False) -> V:
        a = x.a
        if dim is None:  # the first index of the extreme in the flattened tensor; NaN counts as the extreme
            out = np.asarray(np_fn(a.reshape(-1)))
            return V(out.reshape((1,) * x.ndim) if keepdim else out, torch.int64)
        d = dim % max(x.ndim, 1) if x.ndim else 0
        out = np_fn(a, axis=d) if x.ndim else np.asarray(0)
        return V(np.expand_dims(out, d) if keepdim and x.ndim else out, torch.int64)
    return impl


argmax, argmin = _arg(np.argmax), _arg(np.argmin)


def max_dim(ctx: Ctx, x: V, dim: int, keepdim=False) -> tuple:
    return amax(ctx, x, dim, keepdim), argmax(ctx, x, dim, keepdim)


def min_dim(ctx: Ctx, x: V, dim: int, keepdim=False) -> tuple:
    return amin(ctx, x, dim, keepdim), argmin(ctx, x, dim, keepdim)


def max_all(ctx: Ctx, x: V) -> V:
    return amax(ctx, x)


def min_all(ctx: Ctx, x: V) -> V:
    return amin(ctx, x)


def any_(ctx: Ctx, x: V, dim=None, keepdim=False) -> V:
    return V(np.any(x.a != 0, axis=dims(x, dim), keepdims=keepdim), torch.bool)


def all_(ctx: Ctx, x: V, dim=None, keepdim=False) -> V:
    return V(np.all(x.a != 0, axis=dims(x, dim), keepdims=keepdim), torch.bool)


def var(ctx: Ctx, x: V, dim=None, *, correction=None, keepdim=False, unbiased=None) -> V:
    """sum((x - mean)^2) / max(0, N - correction): the two-pass definition (NaN for an infinite input)."""
    if not is_float(x.dtype):
        raise RefRejected("var of an integer tensor")
    c = 1 if correction is None and unbiased is None else (int(unbiased) if correction is None else correction)
    axes = dims(x, dim)
    a = floats(x, ctx)
    n = int(np.prod([a.shape[k] for k in axes])) if axes else 1
    with quiet_errors():
        m = np.mean(a, axis=axes, keepdims=True)
        out = np.sum((a - m) ** 2, axis=axes, keepdims=keepdim) / ctx.work(max(0, n - c))
    return make(out, x.dtype, ctx)


def std(ctx: Ctx, x: V, dim=None, *, correction=None, keepdim=False, unbiased=None) -> V:
    v = var(Ctx(ctx.work, False), x, dim, correction=correction, keepdim=keepdim, unbiased=unbiased)
    with quiet_errors():
        return make(np.sqrt(v.a), x.dtype, ctx)


def var_mean(ctx: Ctx, x: V, dim=None, *, correction=None, keepdim=False) -> tuple:
    return var(ctx, x, dim, correction=correction, keepdim=keepdim), mean(ctx, x, dim, keepdim)


def std_mean(ctx: Ctx, x: V, dim=None, *, correction=None, keepdim=False) -> tuple:
    return std(ctx, x, dim, correction=correction, keepdim=keepdim), mean(ctx, x, dim, keepdim)


def logsumexp(ctx: Ctx, x: V, dim, keepdim=False) -> V:
    """log(sum(exp(x))) with the row's maximum taken out (0 where it is infinite): an infinite row gives inf, an
    all -inf row -inf."""
    a = floats(x, ctx)
    axes = dims(x, dim)
    with quiet_errors():
        m = np.max(a, axis=axes, keepdims=True) if a.size else np.zeros([1] * a.ndim, ctx.work)
        m = np.where(np.isinf(m), 0.0, m)
        out = np.log(np.sum(np.exp(a - m), axis=axes, keepdims=True)) + m
        if not keepdim:
            out = np.squeeze(out, axis=axes)
    return make(out, float_of(x.dtype), ctx)


def _softmax_core(a: np.ndarray, d: int, log: bool) -> np.ndarray:
    with quiet_errors():
        m = np.max(a, axis=d, keepdims=True)
        z = a - m
        s = np.sum(np.exp(z), axis=d, keepdims=True)
        return z - np.log(s) if log else np.exp(z) / s


def softmax(ctx: Ctx, x: V, dim: int, half_to_float=False) -> V:
    dt = torch.float32 if half_to_float else float_of(x.dtype)
    return make(_softmax_core(floats(x, ctx), dim % max(x.ndim, 1), False) if x.ndim else np.ones(()), dt, ctx)


def log_softmax(ctx: Ctx, x: V, dim: int, half_to_float=False) -> V:
    dt = torch.float32 if half_to_float else float_of(x.dtype)
    return make(_softmax_core(floats(x, ctx), dim % max(x.ndim, 1), True) if x.ndim else np.zeros(()), dt, ctx)


def vector_norm(ctx: Ctx, x: V, ord=2, dim=None, keepdim=False, *, dtype=None) -> V:
    dt = dtype or x.dtype
    if not is_float(dt):
        raise RefRejected("vector_norm of an integer tensor")
    a = np.abs(floats(x, ctx))
    axes = dims(x, dim)
    o = float(ord)
    with quiet_errors():
        if o == float("inf"):
            out = np.max(a, axis=axes, keepdims=keepdim)
        elif o == float("-inf"):
            out = np.min(a, axis=axes, keepdims=keepdim)
        elif o == 0:
            out = np.sum((a != 0).astype(ctx.work), axis=axes, keepdims=keepdim)
        elif o == 1:
            out = np.sum(a, axis=axes, keepdims=keepdim)
        elif o == 2:
            out = np.sqrt(np.sum(a * a, axis=axes, keepdims=keepdim))
        else:
            out = np.power(np.sum(np.power(a, ctx.work(o)), axis=axes, keepdims=keepdim), ctx.work(1 / o))
    return make(out, dt, ctx)


def norm(ctx: Ctx, x: V, p=2, dim=None, keepdim=False, dtype=None) -> V:
    return vector_norm(ctx, x, 2 if p is None else p, dim, keepdim, dtype=dtype)


def _scan(np_fn):
    def impl(ctx: Ctx, x: V, dim: int, dtype=None) -> V:
        dt = _acc_dtype(x, dtype)
        d = dim % max(x.ndim, 1) if x.ndim else None
        if is_float(dt):
            with quiet_errors():
                out = np_fn(floats(x, ctx), axis=d) if x.ndim else floats(x, ctx)
            return make(out, dt, ctx)
        return make(np_fn(ints(cast(x, dt, ctx)), axis=d) if x.ndim else ints(x), dt, ctx)
    return impl


cumsum, cumprod = _scan(np.cumsum), _scan(np.cumprod)


# ---- matrix products ------------------------------------------------------------------------------

def _matmul(ctx: Ctx, a: V, b: V, dt: torch.dtype) -> np.ndarray:
    if is_int(dt) or dt == torch.bool:
        return np.matmul(ints(a), ints(b))  # int64, wrapping modulo 2^64; the dtype's width in make()
    with quiet_errors():
        return np.matmul(floats(a, ctx), floats(b, ctx))


def mm(ctx: Ctx, a: V, b: V) -> V:
    if a.dtype != b.dtype:
        raise RefRejected("mm of two dtypes")
    return make(_matmul(ctx, a, b, a.dtype), a.dtype, ctx)


bmm = mm
dot = mm
mv = mm


def addmm(ctx: Ctx, s: V, a: V, b: V, *, beta=1, alpha=1) -> V:
    """beta * s + alpha * (a @ b); beta = 0 ignores s (NaN included), as documented."""
    dt = a.dtype
    from eqsat_test.runners.oracle.refbinary import check_alpha  # (the same rule as add's)
    check_alpha(dt, alpha)
    check_alpha(dt, beta, "beta")
    p = _matmul(ctx, a, b, dt)
    if is_int(dt):
        return make((int(beta) * ints(s) if beta else 0) + int(alpha) * p, dt, ctx)
    with quiet_errors():
        base = ctx.work(beta) * floats(s, ctx) if beta != 0 else 0.0
        return make(base + ctx.work(alpha) * p, dt, ctx)


baddbmm = addmm


def addmv(ctx: Ctx, s: V, a: V, v: V, *, beta=1, alpha=1) -> V:
    return addmm(ctx, s, a, v, beta=beta, alpha=alpha)


# ---- normalizations ------------------------------------------------------------------------------

def _normalize(ctx: Ctx, a: np.ndarray, axes: tuple, eps: float):
    with quiet_errors():
        m = np.mean(a, axis=axes, keepdims=True)
        v = np.mean((a - m) ** 2, axis=axes, keepdims=True)
        rstd = 1 / np.sqrt(v + ctx.work(eps))
        return (a - m) * rstd, m, rstd


def native_layer_norm(ctx: Ctx, x: V, shape, w, b, eps) -> tuple:
    a = floats(x, ctx)
    k = len(shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    y, m, rstd = _normalize(ctx, a, axes, eps)
    with quiet_errors():
        if w is not None:
            y = y * floats(w, ctx)
        if b is not None:
            y = y + floats(b, ctx)
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    return make(y, x.dtype, ctx), make(m, acc, ctx), make(rstd, acc, ctx)


def native_group_norm(ctx: Ctx, x: V, w, b, n, c, hw, groups, eps) -> tuple:
    a = floats(x, ctx)
    g = a.reshape(n, groups, -1)
    y, m, rstd = _normalize(ctx, g, (2,), eps)
    y = y.reshape(a.shape)
    shape = [1, c] + [1] * (x.ndim - 2)
    with quiet_errors():
        if w is not None:
            y = y * floats(w, ctx).reshape(shape)
        if b is not None:
            y = y + floats(b, ctx).reshape(shape)
    acc = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    return make(y, x.dtype, ctx), make(m.reshape(n, groups), acc, ctx), make(rstd.reshape(n, groups), acc, ctx)


def batch_norm_eval(ctx: Ctx, x: V, w, b, rmean: V, rvar: V, momentum, eps) -> tuple:
    """(x - running_mean) / sqrt(running_var + eps) * w + b per channel (dim 1)."""
    shape = [1, -1] + [1] * (x.ndim - 2)
    with quiet_errors():
        y = (floats(x, ctx) - floats(rmean, ctx).reshape(shape)) / np.sqrt(floats(rvar, ctx).reshape(shape) + ctx.work(eps))
        if w is not None:
            y = y * floats(w, ctx).reshape(shape)
        if b is not None:
            y = y + floats(b, ctx).reshape(shape)
    empty = make(np.zeros(0), x.dtype, ctx)
    return make(y, x.dtype, ctx), empty, empty


def native_batch_norm(ctx: Ctx, x: V, w, b, rmean, rvar, training, momentum, eps) -> tuple:
    """Batch statistics (mean and biased variance over every dim but 1) when training or without running
    statistics, else the running ones."""
    if not training and rmean is not None and rvar is not None:
        return batch_norm_eval(ctx, x, w, b, rmean, rvar, momentum, eps)
    a = floats(x, ctx)
    axes = tuple(d for d in range(x.ndim) if d != 1)
    y, m, rstd = _normalize(ctx, a, axes, eps)
    shape = [1, -1] + [1] * (x.ndim - 2)
    with quiet_errors():
        if w is not None:
            y = y * floats(w, ctx).reshape(shape)
        if b is not None:
            y = y + floats(b, ctx).reshape(shape)
    return make(y, x.dtype, ctx), make(m.reshape(-1), x.dtype, ctx), make(rstd.reshape(-1), x.dtype, ctx)


def nll_loss_forward(ctx: Ctx, logp: V, target: V, weight, reduction: int, ignore_index: int) -> tuple:
    """-logp[i, target[i]] * w[target[i]], ignored targets weigh 0; reduction 0 none, 1 mean (by the total
    weight), 2 sum."""
    a = floats(logp, ctx)
    t = ints(target)
    if a.ndim == 1:
        a, t = a[None], t.reshape(1)
    cls = a.shape[1]
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    if bool(((safe < 0) | (safe >= cls)).any()):
        raise RefRejected("a target out of the class range")
    wv = floats(weight, ctx)[safe] if weight is not None else np.ones(safe.shape, ctx.work)
    wv = np.where(keep, wv, 0.0)
    picked = np.take_along_axis(a, safe.reshape(safe.shape[0], 1, *safe.shape[1:]), axis=1).squeeze(1)
    with quiet_errors():
        losses = np.where(keep, -picked * wv, 0.0)
        total = np.sum(wv)
        out = losses if reduction == 0 else (np.sum(losses) / total if reduction == 1 else np.sum(losses))
    if logp.ndim == 1 and reduction == 0:
        out = out.reshape(())
    return make(out, logp.dtype, ctx), make(total, logp.dtype, ctx)


def sdpa_cpu(ctx: Ctx, q: V, k: V, v: V, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None) -> tuple:
    """softmax(q k^T * scale + mask) v with the causal mask aligned to the top left, and the rows' logsumexp."""
    if dropout_p:
        raise RefUndefined("attention with dropout (random)")
    a, b, c = floats(q, ctx), floats(k, ctx), floats(v, ctx)
    s = ctx.work(scale) if scale is not None else 1 / np.sqrt(ctx.work(a.shape[-1]))
    with quiet_errors():
        sc = np.matmul(a, np.swapaxes(b, -1, -2)) * s
        if is_causal:
            L, S = sc.shape[-2], sc.shape[-1]
            sc = np.where(np.tril(np.ones((L, S), bool)), sc, -np.inf)
        if attn_mask is not None:
            sc = np.where(attn_mask.a, sc, -np.inf) if attn_mask.dtype == torch.bool else sc + floats(attn_mask, ctx)
        m = np.max(sc, axis=-1, keepdims=True)
        e = np.exp(sc - m)
        ssum = np.sum(e, axis=-1, keepdims=True)
        out = np.matmul(e / ssum, c)
        lse = (np.log(ssum) + m)[..., 0]
    return make(out, q.dtype, ctx), make(lse, torch.float32, ctx)


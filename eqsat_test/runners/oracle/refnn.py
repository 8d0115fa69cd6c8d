"""The referee's convolutions and pooling: sums over each window written out in NumPy in the working precision (no im2col, no GEMM of ATen's)."""
from __future__ import annotations

import math

import numpy as np
import torch

from eqsat_test.runners.oracle.refunary import quiet_errors
from eqsat_test.runners.oracle.refvalue import Ctx, RefRejected, RefUndefined, V, floats, is_float, make

# The most multiply-adds a window op may cost the referee (NumPy in the working precision).
MAX_MACS = 1 << 28


def _tuple(v, n: int) -> list:
    return list(v) * n if len(v) == 1 else list(v)


def convolution(ctx: Ctx, x: V, w: V, b, stride, padding, dilation, transposed, output_padding, groups) -> V:
    if not is_float(x.dtype):
        raise RefRejected("convolution of an integer tensor")
    a, k = floats(x, ctx), floats(w, ctx)
    nsp = a.ndim - 2
    stride, padding, dilation = _tuple(stride, nsp), _tuple(padding, nsp), _tuple(dilation, nsp)
    ksz = k.shape[2:]
    if math.prod(a.shape) * math.prod(k.shape[1:]) > MAX_MACS:
        raise RefUndefined("a convolution too large for the referee")
    with quiet_errors():
        out = (_conv_t(ctx, a, k, stride, padding, dilation, _tuple(output_padding, nsp), groups, ksz) if transposed
               else _conv(ctx, a, k, stride, padding, dilation, groups, ksz))
        if b is not None:
            out = out + floats(b, ctx).reshape([1, -1] + [1] * nsp)
    return make(out, x.dtype, ctx)


def _conv(ctx, a, k, stride, padding, dilation, groups, ksz):
    nsp = a.ndim - 2
    a = np.pad(a, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    n, c = a.shape[:2]
    o = k.shape[0]
    cg, og = c // groups, o // groups
    osz = [(a.shape[2 + i] - dilation[i] * (ksz[i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    out = np.zeros([n, o] + osz, dtype=ctx.work)
    for off in np.ndindex(*ksz):
        sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (osz[i] - 1) + 1, stride[i])
                   for i in range(nsp))
        patch = a[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wk = k[(slice(g * og, (g + 1) * og), slice(None)) + off]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * cg:(g + 1) * cg], wk)
    return out


def _conv_t(ctx, a, k, stride, padding, dilation, out_pad, groups, ksz):
    nsp = a.ndim - 2
    n, c = a.shape[:2]
    og = k.shape[1]
    cg = c // groups
    isz = a.shape[2:]
    full = [(isz[i] - 1) * stride[i] + dilation[i] * (ksz[i] - 1) + 1 + out_pad[i] for i in range(nsp)]
    out = np.zeros([n, og * groups] + full, dtype=ctx.work)
    for off in np.ndindex(*ksz):
        sl = tuple(slice(off[i] * dilation[i], off[i] * dilation[i] + stride[i] * (isz[i] - 1) + 1, stride[i])
                   for i in range(nsp))
        for g in range(groups):
            wk = k[(slice(g * cg, (g + 1) * cg), slice(None)) + off]
            out[(slice(None), slice(g * og, (g + 1) * og)) + sl] += np.einsum("nc...,co->no...", a[:, g * cg:(g + 1) * cg], wk)
    osz = [(isz[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ksz[i] - 1) + out_pad[i] + 1 for i in range(nsp)]
    crop = tuple(slice(padding[i], padding[i] + osz[i]) for i in range(nsp))
    return out[(slice(None), slice(None)) + crop]


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def max_pool2d_with_indices(ctx: Ctx, x: V, kernel, stride=(), padding=(0,), dilation=(1,), ceil_mode=False) -> tuple:
    """Each window's maximum (NaN wins) and the flat index of its first occurrence in the input plane."""
    kernel = _tuple(kernel, 2)
    stride = _tuple(stride, 2) if stride else kernel
    padding, dilation = _tuple(padding, 2), _tuple(dilation, 2)
    a = x.a
    h, w = a.shape[-2:]
    oh = _pool_out(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode)
    ow = _pool_out(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode)
    lo = -np.inf if is_float(x.dtype) else np.iinfo(np.int64).min
    extra = [max(0, (oh - 1) * stride[0] + dilation[0] * (kernel[0] - 1) + 1 - h - 2 * padding[0]),
             max(0, (ow - 1) * stride[1] + dilation[1] * (kernel[1] - 1) + 1 - w - 2 * padding[1])]
    pads = [(0, 0)] * (a.ndim - 2) + [(padding[0], padding[0] + extra[0]), (padding[1], padding[1] + extra[1])]
    ap = np.pad(a.astype(ctx.work) if is_float(x.dtype) else a, pads, constant_values=lo)
    rows = np.arange(oh)[:, None] * stride[0] - padding[0]
    cols = np.arange(ow)[None, :] * stride[1] - padding[1]
    best = np.full(a.shape[:-2] + (oh, ow), lo, dtype=ap.dtype)
    idx = np.zeros(best.shape, np.int64)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            r, c = rows + i * dilation[0], cols + j * dilation[1]
            v = ap[..., r + padding[0], c + padding[1]]
            take = v > best
            if is_float(x.dtype):
                take |= np.isnan(v) & ~np.isnan(best)
            best = np.where(take, v, best)
            idx = np.where(take, r * w + c, idx)
    return make(best, x.dtype, ctx), V(idx, torch.int64)


def avg_pool2d(ctx: Ctx, x: V, kernel, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> V:
    kernel = _tuple(kernel, 2)
    stride = _tuple(stride, 2) if stride else kernel
    padding = _tuple(padding, 2)
    a = floats(x, ctx)
    h, w = a.shape[-2:]
    oh = _pool_out(h, kernel[0], stride[0], padding[0], 1, ceil_mode)
    ow = _pool_out(w, kernel[1], stride[1], padding[1], 1, ceil_mode)
    out: np.ndarray = np.zeros(a.shape[:-2] + (oh, ow), dtype=ctx.work)
    with quiet_errors():
        for i in range(oh):
            for j in range(ow):
                r0, c0 = i * stride[0] - padding[0], j * stride[1] - padding[1]
                r1, c1 = min(r0 + kernel[0], h + padding[0]), min(c0 + kernel[1], w + padding[1])
                pool = (r1 - r0) * (c1 - c0)
                rr0, cc0, rr1, cc1 = max(r0, 0), max(c0, 0), min(r1, h), min(c1, w)
                s = np.sum(a[..., rr0:rr1, cc0:cc1], axis=(-2, -1))
                div = divisor_override or (pool if count_include_pad else (rr1 - rr0) * (cc1 - cc0))
                out[..., i, j] = s / div
    return make(out, x.dtype, ctx)


def adaptive_avg_pool2d(ctx: Ctx, x: V, output_size) -> V:
    a = floats(x, ctx)
    h, w = a.shape[-2:]
    oh, ow = _tuple(output_size, 2)
    out: np.ndarray = np.zeros(a.shape[:-2] + (oh, ow), dtype=ctx.work)
    with quiet_errors():
        for i in range(oh):
            r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
            for j in range(ow):
                c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
                out[..., i, j] = np.mean(a[..., r0:r1, c0:c1], axis=(-2, -1))
    return make(out, x.dtype, ctx)

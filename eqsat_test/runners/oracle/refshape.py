"""The referee's data movement: views and copies, concatenation, indexing, scatter/gather, creation ops and dtype conversion, in NumPy (values move, none is computed)."""
from __future__ import annotations

import numpy as np
import torch

from eqsat_test.runners.oracle.refbinary import check_alpha
from eqsat_test.runners.oracle.refvalue import (
    Ctx,
    RefRejected,
    RefUndefined,
    V,
    cast,
    floats,
    ints,
    is_float,
    is_int,
    make,
    result_type,
)


def _same(x: V, a: np.ndarray) -> V:
    return V(np.ascontiguousarray(a), x.dtype)


def _dim(x: V, d: int) -> int:
    return d % max(x.ndim, 1)


def view(ctx: Ctx, x: V, size, *rest) -> V:
    return _same(x, x.a.reshape([int(s) for s in size]))


def permute(ctx: Ctx, x: V, perm) -> V:
    return _same(x, np.transpose(x.a, [p % max(x.ndim, 1) for p in perm]) if x.ndim else x.a)


def t(ctx: Ctx, x: V) -> V:
    return _same(x, x.a.T)


def transpose(ctx: Ctx, x: V, d0: int, d1: int) -> V:
    return _same(x, np.swapaxes(x.a, _dim(x, d0), _dim(x, d1)) if x.ndim else x.a)


def expand(ctx: Ctx, x: V, size, implicit=False) -> V:
    size = list(size)
    lead = len(size) - x.ndim
    shape = [s if s != -1 else x.shape[i - lead] for i, s in enumerate(size)]
    return _same(x, np.broadcast_to(x.a, shape))


def unsqueeze(ctx: Ctx, x: V, d: int) -> V:
    return _same(x, np.expand_dims(x.a, d % (x.ndim + 1)))


def squeeze(ctx: Ctx, x: V, dim=None) -> V:
    if dim is None:
        return _same(x, np.squeeze(x.a))
    ds = [dim] if isinstance(dim, int) else list(dim)
    axes = tuple(d % max(x.ndim, 1) for d in ds if x.ndim and x.shape[d % x.ndim] == 1)
    return _same(x, np.squeeze(x.a, axis=axes) if axes else x.a)


def slice_(ctx: Ctx, x: V, dim=0, start=None, end=None, step=1) -> V:
    d = _dim(x, dim)
    n = x.shape[d]
    s = 0 if start is None else (start + n if start < 0 else start)
    e = n if end is None else (end + n if end < 0 else end)
    s, e = min(max(s, 0), n), min(max(e, 0), n)
    idx = [slice(None)] * x.ndim
    idx[d] = slice(s, max(s, e), step)
    return _same(x, x.a[tuple(idx)])


def select(ctx: Ctx, x: V, dim: int, index: int) -> V:
    return _same(x, np.take(x.a, index, axis=_dim(x, dim)))


def narrow(ctx: Ctx, x: V, dim: int, start: int, length: int) -> V:
    return slice_(ctx, x, dim, start, start + length if start >= 0 else start + x.shape[_dim(x, dim)] + length)


def identity(ctx: Ctx, x: V, *args, **kwargs) -> V:
    return _same(x, x.a.copy())


def to_copy(ctx: Ctx, x: V, *, dtype=None, **kwargs) -> V:
    return cast(x, dtype, ctx) if dtype is not None else identity(ctx, x)


def cat(ctx: Ctx, xs, dim=0) -> V:
    xs = [x for x in xs if not (x.ndim == 1 and x.shape[0] == 0)] or list(xs)[:1]
    dt = result_type(*xs)
    parts = [cast(x, dt, ctx).a for x in xs]
    return V(np.concatenate(parts, axis=dim % max(xs[0].ndim, 1)), dt)


def stack(ctx: Ctx, xs, dim=0) -> V:
    dt = result_type(*xs)
    return V(np.stack([cast(x, dt, ctx).a for x in xs], axis=dim % (xs[0].ndim + 1)), dt)


def flip(ctx: Ctx, x: V, dims) -> V:
    return _same(x, np.flip(x.a, axis=tuple(_dim(x, d) for d in dims)))


def roll(ctx: Ctx, x: V, shifts, dims=()) -> V:
    if not dims:
        return _same(x, np.roll(x.a.reshape(-1), shifts[0]).reshape(x.shape))
    return _same(x, np.roll(x.a, tuple(shifts), axis=tuple(_dim(x, d) for d in dims)))


def unfold(ctx: Ctx, x: V, dim: int, size: int, step: int) -> V:
    d = _dim(x, dim)
    n = (x.shape[d] - size) // step + 1 if x.ndim else 1
    if not x.ndim:
        return _same(x, x.a.reshape(1))
    parts = [np.take(x.a, range(i * step, i * step + size), axis=d) for i in range(n)]
    return _same(x, np.stack([np.moveaxis(p, d, -1) for p in parts], axis=d))


def split(ctx: Ctx, x: V, size, dim=0) -> list:
    d = _dim(x, dim)
    n = x.shape[d]
    sizes = [size] * (n // size) + ([n % size] if n % size else []) if isinstance(size, int) else list(size)
    out, at = [], 0
    for s in sizes or [0]:
        out.append(_same(x, np.take(x.a, range(at, at + s), axis=d)))
        at += s
    return out


def split_with_sizes(ctx: Ctx, x: V, sizes, dim=0) -> list:
    return split(ctx, x, list(sizes), dim)


def unbind(ctx: Ctx, x: V, dim=0) -> list:
    d = _dim(x, dim)
    return [_same(x, np.take(x.a, i, axis=d)) for i in range(x.shape[d])]


def repeat(ctx: Ctx, x: V, repeats) -> V:
    a = x.a.reshape((1,) * (len(repeats) - x.ndim) + x.shape)
    return _same(x, np.tile(a, repeats))


def tril(ctx: Ctx, x: V, diagonal=0) -> V:
    return _same(x, np.tril(x.a, diagonal))


def triu(ctx: Ctx, x: V, diagonal=0) -> V:
    return _same(x, np.triu(x.a, diagonal))


def constant_pad_nd(ctx: Ctx, x: V, pad, value=0) -> V:
    a = x.a
    fill = cast(value, x.dtype, ctx).a if not isinstance(value, V) else value.a
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            a = np.take(a, range(-lo, a.shape[d]), axis=d)
            lo = 0
        if hi < 0:
            a = np.take(a, range(0, a.shape[d] + hi), axis=d)
            hi = 0
        widths = [(0, 0)] * a.ndim
        widths[d] = (lo, hi)
        a = np.pad(a, widths, constant_values=fill)
    return _same(x, a)


# ---- indexing --------------------------------------------------------------------------------------

def _index_array(i: V, n: int) -> np.ndarray:
    a = ints(i)
    if bool(((a < -n) | (a >= n)).any()):
        raise RefRejected("an index out of range")
    return np.where(a < 0, a + n, a)


def index(ctx: Ctx, x: V, indices) -> V:
    key = []
    for k, i in enumerate(indices):
        if i is None:
            key.append(slice(None))
        elif i.dtype == torch.bool:
            key.append(i.a)
        else:
            key.append(_index_array(i, x.shape[k]))
    return _same(x, x.a[tuple(key)])


def index_select(ctx: Ctx, x: V, dim: int, idx: V) -> V:
    d = _dim(x, dim)
    return _same(x, np.take(x.a, _index_array(idx, x.shape[d] if x.ndim else 1), axis=d) if x.ndim else x.a)


def gather(ctx: Ctx, x: V, dim: int, idx: V, sparse_grad=False) -> V:
    d = _dim(x, dim)
    ia = _index_array(idx, x.shape[d])
    src = x.a[tuple(slice(0, s) if k != d else slice(None) for k, s in enumerate(ia.shape))]
    return _same(x, np.take_along_axis(src, ia, axis=d))


def _scatter_positions(x: V, dim: int, idx: V):
    d = _dim(x, dim)
    ia = _index_array(idx, x.shape[d])
    grids = list(np.meshgrid(*[np.arange(s) for s in ia.shape], indexing="ij"))
    grids[d] = ia
    return tuple(grids), d


def scatter(ctx: Ctx, x: V, dim: int, idx: V, src, reduce=None) -> V:
    pos, _ = _scatter_positions(x, dim, idx)
    flat = np.ravel_multi_index(pos, x.shape).reshape(-1)
    if reduce is None and len(np.unique(flat)) != flat.size:
        raise RefUndefined("scatter with repeated indices (which write wins is not defined)")
    out = x.a.copy()
    vals = cast(src, x.dtype, ctx).a if not isinstance(src, V) else cast(src, x.dtype, ctx).a
    vals = np.broadcast_to(vals, idx.shape) if vals.ndim == 0 else vals[tuple(slice(0, s) for s in idx.shape)]
    if reduce in ("add", "sum"):
        np.add.at(out, pos, vals)
    elif reduce in ("multiply", "prod"):
        np.multiply.at(out, pos, vals)
    else:
        out[pos] = vals
    return make(out, x.dtype, ctx)


def scatter_add(ctx: Ctx, x: V, dim: int, idx: V, src: V) -> V:
    return scatter(ctx, x, dim, idx, src, "add")


def scatter_reduce(ctx: Ctx, x: V, dim: int, idx: V, src: V, reduce: str, include_self=True) -> V:
    pos, _ = _scatter_positions(x, dim, idx)
    vals = cast(src, x.dtype, ctx).a[tuple(slice(0, s) for s in idx.shape)]
    out = x.a.copy()
    touched = np.zeros(x.shape, bool)
    touched[pos] = True
    if reduce == "mean":
        s, cnt = (out.copy() if include_self else np.zeros_like(out)), np.full(x.shape, 1 if include_self else 0)
        np.add.at(s, pos, vals)
        np.add.at(cnt, pos, 1)
        res = np.where(touched, s / np.maximum(cnt, 1), out)
        if is_int(x.dtype):
            res = np.floor_divide(s, np.maximum(cnt, 1))
            res = np.where(touched, res, out)
        return make(res, x.dtype, ctx)
    ufunc = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    init = {"sum": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
    if not include_self:
        if is_int(x.dtype):
            info = torch.iinfo(x.dtype)
            init = {"sum": 0, "prod": 1, "amax": info.min, "amin": info.max}[reduce]
        base = np.where(touched, init, out).astype(out.dtype)
    else:
        base = out
    ufunc.at(base, pos, vals)
    return make(base, x.dtype, ctx)


def index_add(ctx: Ctx, x: V, dim: int, idx: V, src: V, alpha=1) -> V:
    """x with alpha * src added at the indexed slices along dim; alpha follows torch.add's rule."""
    check_alpha(x.dtype, alpha)
    d = _dim(x, dim)
    ia = _index_array(idx, x.shape[d] if x.ndim else 1)
    out = np.moveaxis(x.a.copy(), d, 0)
    s = np.moveaxis(cast(src, x.dtype, ctx).a, d, 0) if src.ndim else src.a.reshape(1)
    if x.dtype == torch.bool:
        out = out.astype(bool)
        np.logical_or.at(out, ia, s.astype(bool) & bool(alpha))
    elif is_int(x.dtype):
        np.add.at(out, ia, int(alpha) * s)
    else:
        with np.errstate(all="ignore"):
            np.add.at(out, ia, ctx.work(alpha) * floats(V(s, x.dtype), ctx))
    return make(np.moveaxis(out, 0, d), x.dtype, ctx)


def index_put(ctx: Ctx, x: V, indices, values: V, accumulate=False) -> V:
    key = tuple(slice(None) if i is None else (i.a if i.dtype == torch.bool else _index_array(i, x.shape[k]))
                for k, i in enumerate(indices))
    if values.dtype != x.dtype and values.ndim > 0:
        raise RefRejected("index_put of values of another dtype")
    out = x.a.copy()
    vals = cast(values, x.dtype, ctx).a
    if accumulate:
        np.add.at(out, key, vals)
    else:
        probe = np.zeros(x.shape, np.int64)
        np.add.at(probe, key, 1)
        if bool((probe > 1).any()):
            raise RefUndefined("index_put with repeated indices (which write wins is not defined)")
        out[key] = vals
    return make(out, x.dtype, ctx)


def _fill_value(x: V, value, ctx: Ctx) -> np.ndarray:
    v = value if isinstance(value, V) else value
    if is_int(x.dtype) and not isinstance(v, V):
        info = torch.iinfo(x.dtype)
        if not (info.min <= int(v) <= info.max):
            raise RefRejected(f"value {v!r} cannot be converted to {x.dtype} without overflow")
    return cast(v, x.dtype, ctx).a


def masked_fill(ctx: Ctx, x: V, mask: V, value) -> V:
    return V(np.where(mask.a, _fill_value(x, value, ctx), x.a), x.dtype)


def index_fill(ctx: Ctx, x: V, dim: int, idx: V, value) -> V:
    d = _dim(x, dim)
    out = np.moveaxis(x.a.copy(), d, 0)
    out[_index_array(idx, x.shape[d])] = _fill_value(x, value, ctx)
    return V(np.moveaxis(out, 0, d), x.dtype)


def copy(ctx: Ctx, x: V, src: V, non_blocking=False) -> V:
    return V(np.broadcast_to(cast(src, x.dtype, ctx).a, x.shape).copy(), x.dtype)


# ---- creation ---------------------------------------------------------------------------------------

def _default_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    return torch.int64 if isinstance(value, int) else torch.get_default_dtype()


def full(ctx: Ctx, size, value, *, dtype=None, **kwargs) -> V:
    dt = dtype or _default_dtype(value)
    return V(np.broadcast_to(cast(value, dt, ctx).a, [int(s) for s in size]).copy(), dt)


def full_like(ctx: Ctx, x: V, value, *, dtype=None, **kwargs) -> V:
    return full(ctx, x.shape, value, dtype=dtype or x.dtype)


def fill(ctx: Ctx, x: V, value) -> V:
    return full(ctx, x.shape, value.a.item() if isinstance(value, V) else value, dtype=x.dtype)


def zeros(ctx: Ctx, size, *, dtype=None, **kwargs) -> V:
    return full(ctx, size, 0, dtype=dtype or torch.get_default_dtype())


def ones(ctx: Ctx, size, *, dtype=None, **kwargs) -> V:
    return full(ctx, size, 1, dtype=dtype or torch.get_default_dtype())


def zeros_like(ctx: Ctx, x: V, *, dtype=None, **kwargs) -> V:
    return full(ctx, x.shape, 0, dtype=dtype or x.dtype)


def ones_like(ctx: Ctx, x: V, *, dtype=None, **kwargs) -> V:
    return full(ctx, x.shape, 1, dtype=dtype or x.dtype)


def new_full(ctx: Ctx, x: V, size, value, *, dtype=None, **kwargs) -> V:
    return full(ctx, size, value, dtype=dtype or x.dtype)


def new_zeros(ctx: Ctx, x: V, size, *, dtype=None, **kwargs) -> V:
    return full(ctx, size, 0, dtype=dtype or x.dtype)


def new_ones(ctx: Ctx, x: V, size, *, dtype=None, **kwargs) -> V:
    return full(ctx, size, 1, dtype=dtype or x.dtype)


def scalar_tensor(ctx: Ctx, value, *, dtype=None, **kwargs) -> V:
    return full(ctx, (), value, dtype=dtype or torch.get_default_dtype())


def arange(ctx: Ctx, start, end=None, step=1, *, dtype=None, **kwargs) -> V:
    if end is None:
        start, end = 0, start
    ints_only = all(isinstance(v, int) for v in (start, end, step))
    dt = dtype or (torch.int64 if ints_only else torch.get_default_dtype())
    n = int(np.ceil((end - start) / step))
    if is_float(dt):
        return make(ctx.work(start) + np.arange(n, dtype=ctx.work) * ctx.work(step), dt, ctx)
    return make(start + np.arange(n, dtype=np.int64) * step, dt, ctx)


def bucketize(ctx: Ctx, x, boundaries: V, *, out_int32=False, right=False) -> V:
    """The index i with boundaries[i-1] < x <= boundaries[i] (right: <= and <); NaN sorts after every number."""
    xs = floats(x, ctx) if is_float(result_type(x, boundaries)) else ints(x)
    b = floats(boundaries, ctx) if is_float(result_type(x, boundaries)) else ints(boundaries)
    out = np.searchsorted(b, xs, side="right" if right else "left")
    return V(np.asarray(out, np.int64), torch.int32 if out_int32 else torch.int64)


def searchsorted(ctx: Ctx, seq: V, x, *, out_int32=False, right=False, side=None, sorter=None) -> V:
    if sorter is not None:
        raise RefUndefined("searchsorted with a sorter")
    right = right or side == "right"
    if seq.ndim <= 1:
        return bucketize(ctx, x, seq, out_int32=out_int32, right=right)
    xs = x.a.reshape(-1, x.shape[-1])
    rows = seq.a.reshape(-1, seq.shape[-1])
    out = np.stack([np.searchsorted(r, v, side="right" if right else "left") for r, v in zip(rows, xs)])
    return V(out.reshape(x.shape).astype(np.int64), torch.int32 if out_int32 else torch.int64)


def sort(ctx: Ctx, x: V, dim=-1, descending=False, stable=False) -> tuple:
    """Values in order (NaN after every number; descending: first), indices of a stable sort."""
    d = _dim(x, dim)
    a = x.a
    key = a if not descending else (-a if is_float(x.dtype) else -a.astype(np.int64))
    if is_float(x.dtype) and descending:
        key = np.where(np.isnan(a), -np.inf, key)  # NaN first when descending (np.argsort puts NaN last)
    order = np.argsort(key, axis=d, kind="stable")
    return V(np.take_along_axis(a, order, d), x.dtype), V(order.astype(np.int64), torch.int64)


def topk(ctx: Ctx, x: V, k: int, dim=-1, largest=True, sorted=True) -> tuple:
    vals, idx = sort(ctx, x, dim, descending=largest)
    d = _dim(x, dim)
    take = [slice(None)] * x.ndim
    take[d] = slice(0, k)
    return V(vals.a[tuple(take)], x.dtype), V(idx.a[tuple(take)], torch.int64)


def embedding(ctx: Ctx, weight: V, idx: V, padding_idx=-1, scale_grad=False, sparse=False) -> V:
    return _same(weight, weight.a[_index_array(idx, weight.shape[0])])

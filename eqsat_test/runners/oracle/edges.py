"""Where an accumulating op of eager's own reaches the edge of the range: per element of its result, what another order of its partial results can give (runs.EdgeOfRange), for origins.EagerOrigins."""
from __future__ import annotations

import math

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.modes import PRODS, PRODUCT_SUMS, SUMS, finite_part, reduction_terms, run_logs

aten = torch.ops.aten
# what another order of an accumulating op's partial results at the edge of the range can give (EdgeOfRange),
# as bits of a uint8 code per element: an infinity of either sign, NaN, and (through a further op) any value
PLUS, MINUS, NAN, AFTER = 1, 2, 4, 8
ANY = PLUS | MINUS | NAN | AFTER
# a product's (cumprod's) own result whose partial products fall below the smallest normal number in some order of
# its factors: 0 (a partial flushed or rounded to 0) or a value near the exact product (product_under's span)
UNDER = 16
MOMENTS = {aten.var.correction, aten.std.correction, aten.var_mean.correction, aten.std_mean.correction}
NORMS = {aten.native_layer_norm.default, aten.native_group_norm.default, aten.native_batch_norm.default,
         aten._native_batch_norm_legit.default, aten._native_batch_norm_legit.no_stats}
ACCUMULATING = SUMS | PRODS | PRODUCT_SUMS | MOMENTS | NORMS


def edge_source(func, args, kwargs, results: list) -> dict[int, torch.Tensor] | None:
    """An accumulating op's own partial results at the edge of the range (docs: EagerOrigins): per floating result
    (by id) the codes another order of them can give (uint8, its shape); None where none reach the edge, or for an
    argument form not handled here."""
    res = next((t for t in results if t.is_floating_point()), None)
    x = args[1] if func in (aten.addmm.default, aten.baddbmm.default) else args[0] if args else None
    if res is None or not isinstance(x, torch.Tensor) or not x.is_floating_point() or not x.numel():
        return None
    top = nx.max_finite(nx.acc_dtype(res.dtype)) / nx.EDGE_FACTOR
    try:
        if func in PRODS:
            return _product_edge(func, args, kwargs, x, res, top)
        if func in PRODUCT_SUMS:
            pos, neg = _product_sum_signs(func, args, kwargs, res, top)
        elif func in NORMS:
            return None if _largest(x) * x.numel() < top else _norm_edge(func, args, x, res, top)
        else:
            if _largest(x) * reduction_terms(func, args, kwargs, res) < top:
                return None
            xf = finite_part(x).to(torch.float64)
            if func in SUMS:
                rest = {k: v for k, v in kwargs.items() if k != "dtype"}  # the terms' sums in float64
                scale = reduction_terms(func, args, kwargs, res) if func in (aten.mean.dim, aten.mean.default) else 1
                pos = func(xf.clamp(min=0), *args[1:], **rest) * scale
                neg = -func(xf.clamp(max=0), *args[1:], **rest) * scale
            else:  # a variance: its mean's partial sums (Welford's running sums), not its squares
                dims, keep = args[1] if len(args) > 1 else kwargs.get("dim"), bool(kwargs.get("keepdim", False))
                dims = list(range(x.dim())) if dims is None else dims
                pos, neg = xf.clamp(min=0).sum(dims, keep), -xf.clamp(max=0).sum(dims, keep)
                if pos.shape != res.shape:
                    return None
                spread = ((pos >= top) | (neg >= top)).to(torch.uint8) * (PLUS | NAN)
                out = {id(results[0]): spread}
                if len(results) > 1:  # var_mean's mean
                    out[id(results[1])] = _signs(pos, neg, top)
                return out if bool(spread.any()) else None
    except Exception:  # noqa: BLE001 - an argument form not handled here: no codes
        return None
    if pos is None or pos.shape != res.shape:
        return None
    code = _signs(pos, neg, top)
    return {id(res): code} if bool(code.any()) else None


def _largest(t: torch.Tensor) -> float:
    """The largest finite magnitude of t (0 where it has none): its extremes first, without a copy of t."""
    if not t.numel():
        return 0.0
    big = max(abs(float(t.amax())), abs(float(t.amin())))
    return big if math.isfinite(big) else float(finite_part(t).abs().amax())


def _signs(pos: torch.Tensor, neg: torch.Tensor, top: float) -> torch.Tensor:
    """The codes of a sum whose terms of one sign add up to `pos` and of the other to `neg`: the infinity of each
    sign that reaches `top`, NaN where both do."""
    p, n = pos >= top, neg >= top
    return (p.to(torch.uint8) * PLUS) | (n.to(torch.uint8) * MINUS) | ((p & n).to(torch.uint8) * NAN)


def _product_edge(func, args, kwargs, x: torch.Tensor, res: torch.Tensor, top: float) -> dict | None:
    """A product's (a cumprod's: a run of consecutive factors') factors above 1 multiplied to `top`: the infinity
    of the product's sign, NaN where it is 0 (0 * inf)."""
    if _largest(x) <= 1 or x.numel() * math.log(_largest(x)) < math.log(top):  # no factors multiply to it
        return None
    logs = finite_part(x).to(torch.float64).abs().log().clamp(min=0)
    if float(logs.sum()) < math.log(top):
        return None
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    if func is aten.cumprod.default:
        big = run_logs(x.to(torch.float64).movedim(dim, -1))[0].movedim(-1, dim)
    else:
        keep = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False)) and dim is not None
        big = logs.sum(list(range(x.dim())) if dim is None else [dim], keep)
    edge = big >= math.log(top)
    if edge.shape != res.shape:
        return None
    r = res.to(torch.float64)
    code = torch.where(r == 0, NAN, torch.where(r > 0, PLUS, torch.where(r < 0, MINUS, 0)))
    code = torch.where(edge, code, 0).to(torch.uint8)
    return {id(res): code} if bool(code.any()) else None


def _product_sum_signs(func, args, kwargs, res: torch.Tensor, top: float) -> tuple:
    """A matmul's or convolution's products of each sign added up (float64, the result's shape; a bias, times
    beta, among them); (None, None) where no partial result can reach `top`."""
    ia, ib, ic = (1, 2, 0) if func in (aten.addmm.default, aten.baddbmm.default) else \
        (0, 1, 2 if func is aten.convolution.default else None)
    a, b = args[ia], args[ib]
    c = args[ic] if ic is not None and len(args) > ic and isinstance(args[ic], torch.Tensor) else None
    alpha, beta = (abs(float(kwargs.get(k, 1))) for k in ("alpha", "beta"))
    most = lambda t: _largest(t) if t is not None else 0.0  # noqa: E731
    n = reduction_terms(func, args, kwargs, res)
    if most(a) * most(b) * n * max(alpha, 1.0) + most(c) * max(beta, 1.0) < top:
        return None, None
    kw = {k: (max(abs(float(v)), 1.0) if k in ("alpha", "beta") else v) for k, v in kwargs.items()}

    def call(u, v, w):  # the op on parts of its operands, in float64
        a2 = list(args)
        a2[ia], a2[ib] = u, v
        if c is not None and ic is not None:
            a2[ic] = w
        return func(*a2, **kw)
    part = lambda t, s: (finite_part(t).to(torch.float64) * s).clamp(min=0) if t is not None else None  # noqa: E731
    zero = None if c is None else torch.zeros_like(c, dtype=torch.float64)
    pos = call(part(a, 1), part(b, 1), part(c, 1)) + call(part(a, -1), part(b, -1), zero)
    neg = call(part(a, 1), part(b, -1), part(c, -1)) + call(part(a, -1), part(b, 1), zero)
    if any(float(kwargs.get(k, 1)) < 0 for k in ("alpha", "beta")):  # a sign turned: either sign
        pos = neg = pos + neg
    return pos, neg


def _norm_edge(func, args, x: torch.Tensor, res: torch.Tensor, top: float) -> dict | None:
    """A normalization's data of one sign, over each group it normalizes (its mean's partial sums), added up to
    `top`: the group's results admit either infinity and NaN (x - inf, inf * 0)."""
    training = args[3] if func is aten._native_batch_norm_legit.no_stats else \
        args[5] if func in (aten.native_batch_norm.default, aten._native_batch_norm_legit.default) else True
    if not training:  # batch norm with running statistics: no sums
        return None
    xf = finite_part(x).to(torch.float64)
    if func is aten.native_layer_norm.default:
        g = xf.flatten(x.dim() - len(args[1])) if len(args[1]) else xf.unsqueeze(-1)
        shape = g.shape
    elif func is aten.native_group_norm.default:
        g = xf.reshape(int(args[3]), int(args[6]), -1)
        shape = g.shape
    else:  # batch norm: over every dim but the channels'
        g = xf.movedim(1, -1).reshape(-1, x.shape[1]).t()
        shape = None
    pos, neg = g.clamp(min=0).sum(-1, keepdim=True), -g.clamp(max=0).sum(-1, keepdim=True)
    edge = ((pos >= top) | (neg >= top)).expand(g.shape)
    if shape is None:
        edge = edge.t().reshape(x.movedim(1, -1).shape).movedim(-1, 1)
    edge = edge.reshape(x.shape)
    if not bool(edge.any()) or res.shape != x.shape:
        return None
    return {id(res): edge.to(torch.uint8) * (PLUS | MINUS | NAN)}


def product_under(func, args, kwargs, results: list) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """A product's (a cumprod's: a run of consecutive factors') partial products that fall below the smallest normal
    number of the dtype it accumulates in, in some order of its factors (the factors below 1 in magnitude multiplied
    first): where they do, another order's result can be 0 (the partial flushed, as Triton flushes subnormals, or
    rounded to 0) or the exact product off by the rounding of subnormal partials. Per element of the result: its codes
    (UNDER; NAN where an infinity among the factors meets such a 0, or where the factors above 1 also pass the range
    (edge_source): 0 · inf; the infinity of the product's sign where one is among them), and the span of finite
    values another order gives (float64, signed, NaN where none): the exact product X (from the factors' binary
    exponents and mantissas: exact up to n roundings of float64) within r·|X|, r = n·(eps(acc) + eps(result) +
    s / (2 P)), P the smallest partial product some order reaches and s the subnormal spacing, at most 1 (P below s:
    every value between 0 and 2 X). None where no partial product falls below the smallest normal number, where
    the factors hold a 0 or NaN (the product is that in every order), or for an argument form not handled here."""
    res = next((t for t in results if t.is_floating_point()), None)
    x = args[0] if args else None
    if func not in PRODS or res is None or not isinstance(x, torch.Tensor) or not x.is_floating_point() \
            or not x.numel():
        return None
    acc = torch.finfo(nx.acc_dtype(res.dtype))
    xd = x.to(torch.float64)
    ok = torch.isfinite(xd) & (xd != 0)
    mant, expo = torch.frexp(torch.where(ok, xd, 1.0))
    mlog = mant.abs().log2()  # in [-1, 0): log2|x| = mlog + expo, exactly up to one rounding of float64
    logs = mlog + expo
    log_tiny = math.log2(acc.tiny)
    if float(logs.clamp(max=0).sum()) >= log_tiny:  # no factors multiply below the smallest normal number
        return None
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    neg = (torch.signbit(xd) & ~torch.isnan(xd)).to(torch.float64)
    try:
        if func is aten.cumprod.default:
            move = lambda t: t.movedim(dim, -1)  # noqa: E731
            back = lambda t: t.movedim(-1, dim)  # noqa: E731
            top, bottom = run_logs(move(xd))  # the largest and smallest runs of consecutive factors so far
            big, small = back(top) / math.log(2), back(bottom) / math.log(2)
            acc_sum = lambda t: back(move(t).cumsum(-1))  # noqa: E731
            count = back(torch.ones_like(move(xd)).cumsum(-1))
        else:
            keep = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False)) and dim is not None
            dims = list(range(x.dim())) if dim is None else [dim]
            big, small = logs.clamp(min=0).sum(dims, keep), logs.clamp(max=0).sum(dims, keep)
            acc_sum = lambda t: t.sum(dims, keep)  # noqa: E731
            count = torch.full(small.shape, float(x.numel() // max(1, res.numel())), dtype=torch.float64)
        zero = acc_sum((xd == 0).to(torch.float64)) > 0
        nan = acc_sum(torch.isnan(xd).to(torch.float64)) > 0
        inf = acc_sum(torch.isinf(xd).to(torch.float64)) > 0
        minus = torch.remainder(acc_sum(neg), 2) == 1
        mant_log, exps = acc_sum(mlog.where(ok, 0.0)), acc_sum(expo.where(ok, 0).to(torch.float64))
    except Exception:  # noqa: BLE001 - an argument form not handled here: no codes
        return None
    under = (small < log_tiny) & ~zero & ~nan
    if small.shape != res.shape or not bool(under.any()):
        return None
    # the exact product: 2^(its mantissas' logs) · 2^(its exponents), the power of 2 applied in two halves (no
    # intermediate overflow or underflow of its own)
    whole = torch.floor(mant_log)  # (many mantissas near 1/2: their product's binary exponent with the rest)
    mant_log, exps = mant_log - whole, exps + whole
    half = torch.floor(exps / 2)
    exact = torch.exp2(mant_log) * torch.exp2(half) * torch.exp2(exps - half)
    rel = count * (acc.eps + torch.finfo(res.dtype).eps) \
        + count * torch.exp2((math.log2(acc.tiny) + math.log2(acc.eps) - 1 - small).clamp(max=64.0))
    rel = rel.clamp(max=1.0)
    low, high = exact * (1 - rel), exact * (1 + rel)
    low, high = torch.where(minus, -high, low), torch.where(minus, -low, high)
    over = big >= math.log2(nx.max_finite(nx.acc_dtype(res.dtype)) / nx.EDGE_FACTOR)  # as edge_source's
    infinity = torch.where(minus, -math.inf, math.inf)  # an infinity among the factors: the product's, exactly
    low, high = torch.where(inf, infinity, low), torch.where(inf, infinity, high)
    none = torch.full_like(low, math.nan)
    low, high = torch.where(under, low, none), torch.where(under, high, none)
    code = torch.where(under, UNDER, 0) | torch.where(under & (inf | over), NAN, 0) \
        | torch.where(under & inf, torch.where(minus, MINUS, PLUS), 0)
    return code.to(torch.uint8), low, high

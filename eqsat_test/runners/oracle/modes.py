"""The dispatch modes of the eager and fp64 runs (runners/oracle/reference.py): the dtypes a program computes in, casts that keep their precision, values beyond a dtype's range (a reduction's partial results in any order), Monte Carlo rounding and the partial sums' random walk, the order of a sort's ties."""
from __future__ import annotations

import contextlib
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from eqsat_test.runners.oracle import numerics as nx


@contextlib.contextmanager
def float64_default():
    """Every fp64 run is made under this: float64 as torch's default dtype, so that an integer tensor
    that meets a Python float (`0.99 * x` of an int8 x) or a factory without a dtype (torch.zeros(n))
    gives float64 where eager gives the default float32. Else that arithmetic stays float32 in the fp64
    run too, which then shares eager's overflow (reduce_cumprod_discount's int8 sweep on CUDA:
    eager and the fp64 run NaN, the compiled program the exact 0)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


class FloatDtypes(TorchDispatchMode):
    """Records the floating dtypes of every op's outputs while a program runs eagerly (`seen`), and
    those an op rounds its floating inputs down to (`narrowed`: a cast, or an op whose floating
    outputs are coarser than all its floating inputs; not a float32 constant made from integers).
    widen (the fp64 run): a cast of integers or bools to a floating dtype casts to float64 instead,
    so a float model swept at an integer dtype (`x.to(torch.bfloat16)` of int64 inputs) still has
    an fp64 run that computes in float64."""

    def __init__(self, widen: bool = False) -> None:
        super().__init__()
        self.seen: set[torch.dtype] = set()
        self.narrowed: set[torch.dtype] = set()
        self.widen = widen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.widen and func is torch.ops.aten._to_copy.default and isinstance(args[0], torch.Tensor) \
                and not (args[0].is_floating_point() or args[0].is_complex()) \
                and isinstance(kwargs.get("dtype"), torch.dtype) and kwargs["dtype"].is_floating_point:
            kwargs = {**kwargs, "dtype": torch.float64}
        out = func(*args, **kwargs)
        ins = [t.dtype for t in torch.utils._pytree.tree_leaves((args, kwargs))
               if isinstance(t, torch.Tensor) and t.is_floating_point()]
        finest = min((torch.finfo(d).eps for d in ins), default=None)
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                self.seen.add(t.dtype)
                if finest is not None and torch.finfo(t.dtype).eps > finest:
                    self.narrowed.add(t.dtype)
        return out


def coarsest(dtypes) -> torch.dtype | None:
    """The least precise floating dtype of `dtypes` (None if there is none). The judge takes the
    less precise of it and each output's own dtype: a float64 program that rounds to float32
    inside is judged at float32, a float32 one that never goes below float32 at float32."""
    dtypes = [d for d in dtypes if d is not None]
    return max(dtypes, key=lambda d: torch.finfo(d).eps) if dtypes else None


class BeyondRange(TorchDispatchMode):
    """An fp64 run that marks (and sets to NaN) each output element that depends on a value the program's
    arithmetic (in `dt`) cannot hold: a floating result beyond the range of `dt` that is finite in
    float64, an infinity an op makes of finite operands (float64's own overflow), or a reduction's
    partial result beyond the range in some order of its terms (below). An infinity that comes from an
    infinite input stays an infinity, as in the fp64 run (an input +inf is no overflow).

    The marks are a taint carried beside the values (`taint`: a bool mask per tensor), so that a
    comparison cannot wash them out: `where(x > 0, x, 0)` (relu rewritten) of a marked x is marked,
    where NaN > 0 alone would have picked 0 (conv_depthwise_separable, conv_resnext_grouped_block on
    CUDA). Pointwise ops (and casts, copies) mark the elements their marked operands reach,
    broadcast; any other op with a marked floating operand marks the elements of its results that
    change when the marked values are 1 instead of NaN; one with a marked integer or bool operand (an
    index) marks the elements of its results that change when the marked integers are 0 instead of 1
    (all of them where that run fails). A floating result is NaN wherever it is marked. A conversion of
    floats to integers marks the elements whose float is NaN, infinite or beyond the integer's range:
    C++ leaves that conversion undefined (Inductor's grid_sampler_2d decomposition floors a NaN grid
    coordinate into an int64 index and masks it to 0, eager's kernel gives NaN, and the two eager
    kernels, CPU and CUDA, disagree on such grids themselves: pytorch/pytorch#24823). Views take the view
    of their base's mask; in-place ops update their first argument's.

    A reduction's partial results count in any order of its terms (no order is specified, and Triton's
    blocked order is not eager's): an element of a sum, mean, cumsum, matmul or convolution whose finite
    terms of one sign add up beyond the range (times 1 + n eps(dt) for the rounding of n terms), of a
    variance whose squared deviations do, or of a product whose factors above 1 multiply beyond the
    range, or whose factors below 1 multiply below dt's smallest normal while the whole product does not
    or is infinite (0 · inf = NaN in that order), is marked. A cumprod's partial products are those of
    runs of consecutive factors (a scan combines neighbours: Triton's associative scan), without a zero
    or a non-finite factor."""

    def __init__(self, dt: torch.dtype) -> None:
        super().__init__()
        fi = torch.finfo(dt)
        self.max, self.eps, self.log_max, self.log_tiny = fi.max, fi.eps, math.log(fi.max), math.log(fi.tiny)
        from torch.utils.weak import WeakIdKeyDictionary
        self.taint = WeakIdKeyDictionary()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        flat = [t for t in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        marked = [t for t in flat if t in self.taint]
        schema = func._schema
        aliased = any(r.alias_info is not None for r in schema.returns)
        inplace = aliased and any(r.alias_info is not None and r.alias_info.is_write for r in schema.returns)
        elementwise = torch.Tag.pointwise in func.tags or func in ELEMENTWISE
        seeded = torch.Tag.nondeterministic_seeded in func.tags
        # an op that is not pointwise: its results with the marked floating values 1 instead of NaN
        # (`other`), and where it has marked integers or bools (an index) with those 0 (`other`), then 1
        # (`other1`): what changes between them depends on the marks
        float_marks = any(t.is_floating_point() for t in marked)
        other = other1 = None
        if marked and not aliased and not elementwise and not seeded:
            other = self._unmarked_run(func, args, kwargs)
            if other is not None and not all(t.is_floating_point() for t in marked):
                other1 = self._unmarked_run(func, args, kwargs, fill=1)
                if other1 is None:  # marked indices that cannot be 1: all results marked (below)
                    other = None
        # the operands' infinities (an infinity they carry in is no overflow): before an in-place op writes
        before_inf = [t.isinf() if t.is_floating_point() else None for t in flat] if inplace else None
        out = func(*args, **kwargs)
        if aliased and not inplace:  # a view: the view of its base's mask
            if marked and args and isinstance(args[0], torch.Tensor) and args[0] in self.taint:
                views = out if isinstance(out, (tuple, list)) else [out]
                try:
                    masks = func(self.taint[args[0]], *args[1:], **kwargs)
                    masks = masks if isinstance(masks, (tuple, list)) else [masks]
                except Exception:  # noqa: BLE001 - a view the mask cannot take: all of it
                    masks = [torch.ones_like(v, dtype=torch.bool) if isinstance(v, torch.Tensor) else None for v in views]
                for v, mv in zip(views, masks):
                    if isinstance(v, torch.Tensor) and isinstance(mv, torch.Tensor) and mv.shape == v.shape:
                        self.taint[v] = mv
            return out
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        reach = _order_reach(func, args, kwargs, out, self) if func in _REDUCTIONS else None
        new = []
        for k, o in enumerate(outs):
            if not isinstance(o, torch.Tensor):
                new.append(o)
                continue
            m = torch.zeros_like(o, dtype=torch.bool)
            if marked and not seeded:
                if elementwise:
                    for t in marked:
                        if func is _aten.copy_.default and t is args[0]:  # overwritten
                            continue
                        try:
                            m |= self.taint[t].expand(o.shape) if t is not o else self.taint[t]
                        except Exception:  # noqa: BLE001 - shapes that do not broadcast: all of it
                            m |= True
                elif other is not None and isinstance(other[k], torch.Tensor) and other[k].shape == o.shape:
                    if other1 is None or float_marks:
                        m |= ~nx.equal_nan(o, other[k].to(o.dtype))
                    if other1 is not None:
                        m |= ~nx.equal_nan(other[k], other1[k])
                else:
                    m |= True
            if func in CASTS and not (o.is_floating_point() or o.is_complex()) and o.dtype != torch.bool \
                    and isinstance(args[0], torch.Tensor) and args[0].is_floating_point() and args[0].shape == o.shape:
                x, info = args[0], torch.iinfo(o.dtype)  # a float to integer conversion C++ leaves undefined
                m |= ~torch.isfinite(x) | (x < info.min) | (x > info.max)
            if o.is_floating_point():
                m |= torch.isfinite(o) & (o.abs() > self.max)
                if bool(o.isinf().any()):  # an infinity of finite operands: float64's own overflow
                    src = torch.zeros_like(m)
                    for inf in before_inf or [t.isinf() if t.is_floating_point() else None for t in flat]:
                        if inf is not None and bool(inf.any()):
                            try:
                                src |= inf.expand(o.shape) if elementwise else True
                            except Exception:  # noqa: BLE001
                                src |= True
                    m |= o.isinf() & ~src
                if reach is not None and reach.shape == o.shape:
                    m |= reach
            if bool(m.any()):
                if o.is_floating_point():
                    o = o.masked_fill_(m, math.nan) if inplace else o.masked_fill(m, math.nan)
                if inplace and o in self.taint and self.taint[o].shape == m.shape:
                    self.taint[o].copy_(m)  # in place: views of it share its mask
                else:
                    self.taint[o] = m
            elif inplace and o in self.taint:
                self.taint[o].zero_()
            new.append(o)
        if inplace:
            return out
        return type(out)(new) if isinstance(out, (tuple, list)) else new[0]

    def _unmarked_run(self, func, args, kwargs, fill: int = 0):
        """func's results with every marked floating value 1 instead of NaN and every marked integer or
        bool value `fill` (mutated arguments cloned), a list like the results; None if it fails (an index
        out of range)."""
        writes = {i for i, a in enumerate(func._schema.arguments) if a.alias_info is not None and a.alias_info.is_write}

        def swap(t):
            if isinstance(t, torch.Tensor) and t in self.taint:
                return t.masked_fill(self.taint[t], 1.0 if t.is_floating_point() else fill)
            return t
        a2 = [torch.utils._pytree.tree_map(swap, a) for a in args]  # lists too (cat, index's indices)
        a2 = [b.clone() if i in writes and b is a else b for i, (a, b) in enumerate(zip(args, a2))]
        try:
            o = func(*a2, **torch.utils._pytree.tree_map(swap, kwargs))
        except Exception:  # noqa: BLE001
            return None
        return list(o) if isinstance(o, (tuple, list)) else [o]

    def outputs(self, out):
        """The marks of the program's output, for the judge: each tensor leaf as a float64 tensor of its
        shape, 1 where marked and 0 elsewhere (not the values: an fp64 NaN of float64's own overflow is
        marked, one of an input NaN is not)."""
        def conv(t):
            if isinstance(t, torch.Tensor):
                m = self.taint.get(t)
                z = torch.zeros(t.shape, dtype=torch.float64, device=t.device)
                return z if m is None or m.shape != t.shape else z.masked_fill(m, 1.0)
            return t
        return nx.rebuild(out, conv)


_aten = torch.ops.aten
SUMS = {_aten.sum.dim_IntList, _aten.sum.default, _aten.mean.dim, _aten.mean.default, _aten.cumsum.default}
PRODS = {_aten.prod.dim_int, _aten.prod.default, _aten.cumprod.default}
_VARS = {_aten.var.correction, _aten.var_mean.correction}
PRODUCT_SUMS = {_aten.mm.default, _aten.bmm.default, _aten.addmm.default, _aten.mv.default, _aten.dot.default,
                 _aten.baddbmm.default, _aten.convolution.default}
_REDUCTIONS = SUMS | PRODS | _VARS | PRODUCT_SUMS
_ADDS = {_aten.add.Tensor, _aten.sub.Tensor}
CASTS = {_aten._to_copy.default, torch.ops.prims.convert_element_type.default}
# ops that map each element to the element of their result at the same place (broadcast), untagged pointwise
ELEMENTWISE = {_aten._to_copy.default, _aten.copy_.default, _aten.copy.default, _aten.where.ScalarOther,
                _aten.where.ScalarSelf, _aten.where.Scalar, _aten.masked_fill.Tensor, _aten.lift_fresh_copy.default,
                _aten.clone.default}


def finite_part(t: torch.Tensor) -> torch.Tensor:
    return t.where(torch.isfinite(t), 0.0)


def reduction_terms(func, args, kwargs, res: torch.Tensor) -> int:
    """How many terms each element of a reduction's result combines."""
    x = args[0]
    if func in PRODUCT_SUMS:
        w = args[1] if func in (_aten.convolution.default, _aten.mm.default, _aten.bmm.default,
                                _aten.mv.default, _aten.dot.default) else args[2]
        return w[0].numel() if func is _aten.convolution.default else w.shape[0] if w.dim() == 1 else w.shape[-2]
    if func in (_aten.cumsum.default, _aten.cumprod.default):
        return x.shape[args[1] if len(args) > 1 else kwargs["dim"]] if x.dim() else 1
    return x.numel() // max(1, res.numel())


def _on_magnitudes(func, args, kwargs, power: int = 1):
    """A sum-like reduction (a sum, mean, cumsum, matmul, convolution) of its finite terms' magnitudes
    (`power` 1: at least the magnitude of every partial result, in any order), or of their squares
    (`power` 2: the terms' squared 2-norms)."""
    def mag(a):
        if isinstance(a, torch.Tensor) and a.is_floating_point():
            return finite_part(a).abs() ** power
        return abs(a) ** power if isinstance(a, (int, float)) and not isinstance(a, bool) else a
    return func(*map(mag, args), **{k: mag(v) for k, v in kwargs.items()})


def _operands(func, args, kwargs) -> torch.Tensor:
    """|a| + |alpha·b| of an add or sub."""
    return _on_magnitudes(torch.add, args[:2], {"alpha": kwargs.get("alpha", args[2] if len(args) > 2 else 1)})


def _rounding_walk(func, args, kwargs, res: torch.Tensor) -> torch.Tensor:
    """sqrt of the sum of the squared partial results of a sum-like reduction (the result's shape): in
    order along the reduced dims for a sum, mean or cumsum; sqrt(n) times the terms' 2-norm for a
    matmul or convolution (partial sums of n terms of random signs)."""
    if func in PRODUCT_SUMS:
        return (_on_magnitudes(func, args, kwargs, 2) * reduction_terms(func, args, kwargs, res)).sqrt()
    x = finite_part(args[0]).to(torch.float64)
    if func is _aten.cumsum.default:
        d = args[1] if len(args) > 1 else kwargs["dim"]
        return x.cumsum(d).square().cumsum(d).sqrt()
    dims = args[1] if len(args) > 1 else kwargs.get("dim")
    dims = list(range(x.dim())) if not dims else [d % x.dim() for d in ([dims] if isinstance(dims, int) else dims)]
    kept = [d for d in range(x.dim()) if d not in dims]
    flat = x.permute(kept + dims).reshape([x.shape[d] for d in kept] + [-1])
    walk = flat.cumsum(-1).square().sum(-1).sqrt()
    if func in (_aten.mean.dim, _aten.mean.default):
        walk = walk / max(1, flat.shape[-1])
    return walk.reshape(res.shape)


def _order_reach(func, args, kwargs, out, r: BeyondRange) -> torch.Tensor | None:
    """Where some order of the reduction's terms takes a partial result beyond `r`'s range (bool, the
    result's shape); None where it cannot tell (an argument form not handled here)."""
    x = args[0] if args else None
    res = out[0] if isinstance(out, (tuple, list)) else out
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or not isinstance(res, torch.Tensor):
        return None
    try:
        n = reduction_terms(func, args, kwargs, res)
        if func in PRODUCT_SUMS:  # every partial sum is at most the sum of its terms' magnitudes
            return _on_magnitudes(func, args, kwargs) * (1 + n * r.eps) > r.max
        scan = func in (_aten.cumsum.default, _aten.cumprod.default)
        dims = args[1] if len(args) > 1 else kwargs.get("dim")
        xf = finite_part(x)
        if func in PRODS:
            inf = ~torch.isfinite(res)  # an infinity (or NaN) of the exact product: 0 · inf = NaN in some orders
            if scan:
                return _scan_reach(x.to(torch.float64), dims, inf, r)
            logs = xf.abs().log().where(xf != 0, 0.0)
            keep = bool(args[2] if len(args) > 2 else kwargs.get("keepdim", False)) and dims is not None
            dims = list(range(x.dim())) if dims is None else [dims]
            big, small = logs.clamp(min=0).sum(dims, keep), logs.clamp(max=0).sum(dims, keep)
            return (big > r.log_max) | ((small < r.log_tiny) & ((small + big > r.log_tiny) | inf))
        if func in SUMS:
            # the terms of one sign that pass the range in some order decide nothing where an infinity of that
            # sign is among the terms (the sum is that infinity, or NaN where the other sign's is, in any order)
            scale = n if func in (_aten.mean.dim, _aten.mean.default) else 1  # a mean's partial results are sums
            sums = lambda t: func(t, *args[1:], **kwargs)  # noqa: E731
            pos, neg = sums(xf.clamp(min=0)) * scale, -sums(xf.clamp(max=0)) * scale
            has = lambda inf: sums((x == inf).to(x.dtype)) > 0  # noqa: E731
            over = lambda t: t * (1 + n * r.eps) > r.max  # noqa: E731
            return (over(pos) & ~has(math.inf)) | (over(neg) & ~has(-math.inf))
        # a variance: its partial sums of squared deviations (Welford's too) are at most the whole
        keep = bool(kwargs.get("keepdim", False))
        dims = list(range(x.dim())) if dims is None else dims
        fin = torch.isfinite(x)
        mean = xf.sum(dims, keepdim=True) / fin.sum(dims, keepdim=True).clamp(min=1)
        dev2 = ((x - mean) ** 2).where(fin, 0.0).sum(dims, keepdim=keep)
        top = torch.maximum(xf.clamp(min=0).sum(dims, keepdim=keep), -xf.clamp(max=0).sum(dims, keepdim=keep))
        return torch.maximum(dev2, top) * (1 + n * r.eps) > r.max
    except Exception:  # noqa: BLE001 - an argument form not handled here: no order reach then
        return None


def _scan_reach(x: torch.Tensor, dim: int, inf: torch.Tensor, r: BeyondRange) -> torch.Tensor:
    """A cumprod's partial products beyond the range (bool, x's shape): at element j, a run of consecutive
    nonzero finite factors up to j whose product passes dt's largest value, or falls below its smallest
    normal while the product up to j does not (or is infinite: `inf`, or holds a zero before: exactly 0
    in every order then)."""
    xl = x.movedim(dim, -1)
    top, bottom = run_logs(xl)
    logs = xl.abs().log().where(torch.isfinite(xl) & (xl != 0), 0.0)
    whole = logs.cumsum(-1)
    zero = (xl == 0).cumsum(-1) > 0
    over = top > r.log_max
    under = (bottom < r.log_tiny) & (((whole > r.log_tiny) & ~zero) | inf.movedim(dim, -1))
    return (over | under).movedim(-1, dim)


def run_logs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The partial products of a scan along x's last dim (float64): at element j, the largest and the
    smallest log-magnitude of a product of a run of consecutive nonzero finite factors up to j (Kadane's
    runs; -inf / +inf where there is none)."""
    ok = torch.isfinite(x) & (x != 0)
    logs = x.abs().log().where(ok, 0.0)
    hi = torch.full(x.shape[:-1], -math.inf, dtype=torch.float64, device=x.device)
    lo = torch.full_like(hi, math.inf)
    top, bottom = hi.clone(), lo.clone()
    tops, bottoms = [], []
    for k in range(x.shape[-1]):  # the largest and smallest sums of logs ending at k
        lk, okk = logs[..., k], ok[..., k]
        hi = torch.where(okk, torch.maximum(lk, hi + lk), torch.full_like(hi, -math.inf))
        lo = torch.where(okk, torch.minimum(lk, lo + lk), torch.full_like(lo, math.inf))
        top, bottom = torch.maximum(top, hi), torch.minimum(bottom, lo)
        tops.append(top)
        bottoms.append(bottom)
    return torch.stack(tops, -1), torch.stack(bottoms, -1)


class KeptPrecision(FloatDtypes):
    """The fp64 run as Inductor computes by default: a cast of floating data to a coarser floating
    dtype (x.bfloat16()) rounds the values once and keeps the data's precision, so the ops after it
    do not round their results to that dtype. PyTorch documents that compiled code keeps such
    intermediates in float32 unless `emulate_precision_casts` is set: a compiled value that agrees
    with this run where eager's rounding took it away (1 + tanh(x) of a bfloat16 x near -3: eager
    -0, compiled -0.0026, this run -0.0026) is no miscompile."""

    def __init__(self) -> None:
        super().__init__(widen=True)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        x, to = (args[0] if args else None), kwargs.get("dtype")
        if func is torch.ops.aten._to_copy.default and isinstance(x, torch.Tensor) and x.is_floating_point() \
                and isinstance(to, torch.dtype) and to.is_floating_point and torch.finfo(to).eps > torch.finfo(x.dtype).eps:
            return super().__torch_dispatch__(func, types, args, kwargs).to(x.dtype)
        return super().__torch_dispatch__(func, types, args, kwargs)


# ops that test their floating operands against 0 (a cast to bool, a comparison with the scalar 0, a logical op, a
# count of nonzeros): a step at 0, which a relative move of the operand never crosses
_COMPARISONS_0 = {_aten.eq.Scalar, _aten.ne.Scalar, _aten.gt.Scalar, _aten.ge.Scalar, _aten.lt.Scalar, _aten.le.Scalar}
_TESTS_0 = {_aten.logical_not.default, _aten.logical_and.default, _aten.logical_or.default,
            _aten.logical_xor.default, _aten.count_nonzero.default, _aten.count_nonzero.dim_IntList}


def tests_zero(func, args, kwargs) -> bool:
    """Whether func tests its floating operands against 0 (_COMPARISONS_0, _TESTS_0, a cast to bool)."""
    if func in _COMPARISONS_0:
        return len(args) > 1 and not isinstance(args[1], torch.Tensor) and args[1] == 0
    if func in CASTS:
        to = kwargs.get("dtype", args[1] if func is not _aten._to_copy.default and len(args) > 1 else None)
        return to is torch.bool
    return func in _TESTS_0


class RoundingNoise(TorchDispatchMode):
    """Monte Carlo arithmetic on an fp64 run (numerics.py): every floating result of an op that may
    have been rounded in `dt` is scaled by (1 + sign eps(dt) r), r uniform in [-1, 1] per element,
    drawn from `seed` (the same draws for both signs): a float64 result that dt cannot hold exactly,
    or a result in dt itself (the program cast to it) that is not a whole number or is as large as 2^(its mantissa bits). Views and in-place
    results are left alone (their aliasing must hold); the program's inputs are not moved (the
    compiler gets them as they are). Where an op tests a floating operand against 0 (tests_zero: x.bool(),
    x > 0), no scaling crosses the step: an element within ROUND_ULPS eps(dt) of the operand's median magnitude
    of 0 (a cancellation inside an op, linspace's middle value) is read as 0 by the + runs, and across 0 by the -
    runs (-x), so that the test's result that rounding decides is one some run gives (not the walk's runs: they
    move sums). An exact 0 stays (x * 0, relu's, an input's: 0 in any order)."""

    def __init__(self, dt: torch.dtype, seed: int, sign: int, walk: bool = False, scale: float = 1.0) -> None:
        super().__init__()
        self.dt, self.step, self.gen = dt, sign * torch.finfo(dt).eps, torch.Generator().manual_seed(1000 + seed)
        acc = nx.acc_dtype(dt)
        # scale: the walk's moves times this (the same signs: the judge's homogeneity test of a walk pair)
        self.acc_step, self.acc_exact = scale * sign * torch.finfo(acc).eps, 2 / torch.finfo(acc).eps
        self.walk = walk

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.walk and tests_zero(func, args, kwargs):
            args = tuple(self._across_zero(a) for a in args)
        out = func(*args, **kwargs)
        if any(r.alias_info is not None for r in func._schema.returns):
            return out
        if not self.walk:
            return torch.utils._pytree.tree_map(self._move, out)
        if (func in SUMS or func in PRODUCT_SUMS or func in _ADDS) and isinstance(out, torch.Tensor):
            return self._move_sum(func, args, kwargs, out)
        return out

    def _move_sum(self, func, args, kwargs, out: torch.Tensor) -> torch.Tensor:
        """walk: a sum-like reduction rounds each of its n - 1 partial sums s_j in acc(dt), each by up to
        eps·|s_j|, in an order no one specifies: its result moves by eps·sqrt(sum of s_j^2), the roundings'
        random walk (Higham and Mary 2019), with a random sign per element; s_j the partial sums in order
        for a sum, mean or cumsum (a row whose large terms cancel has large ones), sqrt(n)·|terms|_2 for a
        matmul or convolution; and an add or sub by eps·(|a| + |b|): either operand may carry one
        rounding, or none where the compiled code kept a cast's precision at one of its reads (a value
        cast to float32 and read twice, -a + a, is 0 eagerly and a's rounding compiled: Inductor's
        documented `emulate_precision_casts=False`). The result's own rounding, eps·|result|, misses
        them. Not moved: elements every partial sum of which is a whole number that acc(dt) holds (a
        count is exact in any order)."""
        if not out.is_floating_point() or out.numel() == 0 or torch.finfo(out.dtype).eps > torch.finfo(self.dt).eps:
            return out
        try:
            walk = (_operands(func, args, kwargs) if func in _ADDS else _rounding_walk(func, args, kwargs, out)).to(torch.float64)
            whole = all(bool((a == a.round()).all()) for a in torch.utils._pytree.tree_leaves((args, kwargs))
                        if isinstance(a, torch.Tensor) and a.is_floating_point())
            r = torch.randint(0, 2, out.shape, generator=self.gen).to(torch.float64).mul_(2).sub_(1).to(out.device)
            spread = self.acc_step * r * walk
            if whole:  # every partial sum a whole number acc(dt) holds: exact in any order
                mag = walk if func in _ADDS else _on_magnitudes(func, args, kwargs)
                spread = spread.where(mag > self.acc_exact, 0.0)
            return (out.double() + spread).to(out.dtype)
        except Exception:  # noqa: BLE001 - an argument form not handled here
            return out

    def _across_zero(self, t):
        """t as a test against 0 reads it in this run: its nonzero elements within ROUND_ULPS eps(dt) of its median
        finite magnitude of 0 at 0 (a + run) or across 0 (a - run); t itself where it is no floating tensor."""
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() == 0:
            return t
        mag = t.detach().abs()
        mag = mag[torch.isfinite(mag) & (mag > 0)]
        if mag.numel() == 0:
            return t
        near = nx.ROUND_ULPS * torch.finfo(self.dt).eps * float(mag.double().median())
        close = torch.isfinite(t) & (t.abs() <= near)
        return t.masked_fill(close, 0.0) if self.step > 0 else torch.where(close, -t, t)

    def _move(self, t):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() == 0 \
                or torch.finfo(t.dtype).eps > torch.finfo(self.dt).eps:
            return t
        r = torch.rand(t.shape, generator=self.gen, dtype=torch.float64).mul_(2).sub_(1).to(t.device)
        # a value in dt at or past 2^(its mantissa bits) is a whole number whether or not it was rounded
        inexact = (t.to(self.dt).to(t.dtype) != t) if t.dtype != self.dt else \
            ((t != t.round()) | (t.abs() >= 2 / torch.finfo(self.dt).eps))
        return torch.where(inexact, (t.double() * (1 + self.step * r)).to(t.dtype), t)


class TieOrder(TorchDispatchMode):
    """Sorts (sort, argsort, topk) made stable, with ties in index order (`shift` 0), or with each group of
    tied keys rotated by `shift` places (position p of a group of k takes the element of p + shift, mod
    k): an element of the program's output that differs between the run in index order and one of the
    rotated runs depends on the order of tied keys, which torch.sort without stable=True, topk and
    Triton's sort leave open. The rotations by 1 .. k - 1 bring every member of a group of k to every
    position of it (index order against reverse index order missed the middle one of a group of three,
    and two tokens equal at an element hide a third: index_take_along_dim on CUDA). NaN sorts
    as the largest value in each run and NaNs tie with each other; -0 ties with +0. `sorted`: whether
    any such sort ran; `largest`: the largest group of ties seen."""

    def __init__(self, shift: int = 0) -> None:
        super().__init__()
        self.shift, self.sorted, self.largest = int(shift), False, 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        a = _aten
        if func in (a.sort.default, a.sort.stable) and isinstance(args[0], torch.Tensor):
            names = ("dim", "descending") if func is a.sort.default else ()
            opt = {**dict(zip(names, args[1:])), **{k: v for k, v in kwargs.items() if k != "stable"}}
            return self._sort(args[0], opt.get("dim", -1), bool(opt.get("descending", False)))
        if func is a.topk.default and isinstance(args[0], torch.Tensor):
            opt = {**dict(zip(("k", "dim", "largest", "sorted"), args[1:])), **kwargs}
            dim = opt.get("dim", -1)
            v, i = self._sort(args[0], dim, bool(opt.get("largest", True)))
            return v.narrow(dim, 0, opt["k"]), i.narrow(dim, 0, opt["k"])
        return func(*args, **kwargs)

    def _sort(self, x: torch.Tensor, dim: int, descending: bool):
        self.sorted = True
        if x.dim() == 0:
            return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
        v, i = torch.sort(x, dim=dim, descending=descending, stable=True)
        if x.shape[dim] < 2:
            return v, i
        vl, il = v.movedim(dim, -1), i.movedim(dim, -1)
        n = vl.shape[-1]
        pos = torch.arange(n, device=x.device).expand(vl.shape)
        tie = nx.equal_nan(vl[..., 1:], vl[..., :-1])  # position p + 1 ties with p
        start = torch.cat([torch.ones_like(tie[..., :1]), ~tie], -1)  # the first position of each group
        first = torch.where(start, pos, torch.zeros_like(pos)).cummax(-1).values
        end = torch.cat([~tie, torch.ones_like(tie[..., :1])], -1)  # the last position of each group
        last = torch.where(end, pos, torch.full_like(pos, n)).flip(-1).cummin(-1).values.flip(-1)
        size = last - first + 1
        self.largest = max(self.largest, int(size.max()))
        if self.shift % n == 0:
            return v, i
        src = first + (pos - first + self.shift) % size
        i = il.gather(-1, src).movedim(-1, dim)
        return x.gather(dim, i), i

"""The generator's op table, part 3: interpolation with non-integer scales, pools and convolutions with strides, padding, dilations and ceil mode, and matrix products (float and integer), on (N, C, spatial...) values."""
from __future__ import annotations

import torch

from eqsat_test.hunt.state import DrawError, Gen

SCALES = (0.5, 0.6, 0.75, 1.3, 1.5, 1.7, 2.0, 2.5, 3.3, 0.3)
MODES = {3: ("nearest", "linear", "nearest-exact", "area"),
         4: ("nearest", "bilinear", "bicubic", "nearest-exact", "area"),
         5: ("nearest", "trilinear", "nearest-exact", "area")}
_ALIGNED = {"linear", "bilinear", "bicubic", "trilinear"}


def _spatial(g: Gen, ranks=(3, 4)) -> str:
    return g.pick(lambda t: t.dim() in ranks and t.numel() > 0 and all(s > 0 for s in t.shape))


def interpolate(g: Gen):
    a = _spatial(g, (3, 4, 5))
    t = g.t(a)
    rng = g.rng
    mode = rng.choice(MODES[t.dim()])
    align = f", align_corners={rng.random() < 0.5}" if mode in _ALIGNED and rng.random() < 0.6 else ""
    if rng.random() < 0.7:
        s = rng.choice(SCALES)
        scale = s if rng.random() < 0.6 else tuple(rng.choice(SCALES) for _ in range(t.dim() - 2))
        recompute = ", recompute_scale_factor=True" if rng.random() < 0.2 else ""
        return f"F.interpolate({a}, scale_factor={scale}, mode={mode!r}{align}{recompute})", "interpolate", "resample"
    size = tuple(max(1, int(d * rng.choice(SCALES))) for d in t.shape[2:])
    return f"F.interpolate({a}, size={size}, mode={mode!r}{align})", "interpolate", "resample"


def pool(g: Gen):
    a = _spatial(g)
    t = g.t(a)
    rng = g.rng
    nd = t.dim() - 2
    k = rng.choice((2, 3))
    stride = rng.choice((1, 2, 3, None))
    pad = rng.randint(0, k // 2)
    dil = rng.choice((1, 1, 2))
    ceil = rng.random() < 0.4
    r = rng.random()
    s = "" if stride is None else f", stride={stride}"
    if r < 0.35:
        return f"F.max_pool{nd}d({a}, {k}{s}, padding={pad}, dilation={dil}, ceil_mode={ceil})", \
            f"max_pool{nd}d", "resample"
    if r < 0.65:
        cip = rng.random() < 0.5
        div = f", divisor_override={rng.choice((1, 3))}" if nd == 2 and rng.random() < 0.2 else ""
        return f"F.avg_pool{nd}d({a}, {k}{s}, padding={pad}, ceil_mode={ceil}, count_include_pad={cip}{div})", \
            f"avg_pool{nd}d", "resample"
    out = tuple(rng.choice((1, 2, 3, 5, 7)) for _ in range(nd))
    name = f"adaptive_{rng.choice(('avg', 'max'))}_pool{nd}d"
    return f"F.{name}({a}, {out if nd > 1 else out[0]})", name, "resample"


def conv(g: Gen):
    a = _spatial(g)
    t = g.t(a)
    if not t.is_floating_point():
        raise DrawError("convolutions take floats")
    rng = g.rng
    nd = t.dim() - 2
    cin = t.shape[1]
    groups = rng.choice([d for d in (1, 2, 3) if cin % d == 0])
    cout = groups * rng.choice((1, 2, 3))
    k = rng.choice((1, 2, 3))
    dt = str(t.dtype).replace("torch.", "")
    stride, pad, dil = rng.choice((1, 2, 3)), rng.choice((0, 1, 2)), rng.choice((1, 2))
    bias = g.new_param((cout,), dt) if rng.random() < 0.6 else "None"
    if rng.random() < 0.75:
        w = g.new_param((cout, cin // groups) + (k,) * nd, dt)
        return f"F.conv{nd}d({a}, {w}, {bias}, stride={stride}, padding={pad}, dilation={dil}, groups={groups})", \
            f"conv{nd}d", "resample"
    w = g.new_param((cin, cout // groups) + (k,) * nd, dt)
    outpad = rng.randrange(max(stride, dil)) if rng.random() < 0.4 else 0
    return (f"F.conv_transpose{nd}d({a}, {w}, {bias}, stride={stride}, padding={pad}, output_padding={outpad}, "
            f"groups={groups}, dilation={dil})"), f"conv_transpose{nd}d", "resample"


RESAMPLE_BUILDERS = [interpolate, interpolate, pool, pool, conv]
_INTS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)  # integer products run on CPU too


def matmul(g: Gen):
    a = g.pick(lambda t: t.dim() >= 1 and (t.dtype.is_floating_point or t.dtype in _INTS))
    t = g.t(a)
    rng = g.rng
    k = t.shape[-1]
    dt = str(t.dtype).replace("torch.", "")
    fits = [n for n in g.order if n != a and n not in g.index_names and g.t(n).dim() == 2 and g.t(n).shape[0] == k
            and g.t(n).dtype == t.dtype]
    b = rng.choice(fits) if fits and rng.random() < 0.5 else g.new_input((k, rng.choice((1, 3, 8, 17))), dtype=dt) \
        if rng.random() < 0.5 else g.new_param((k, rng.choice((1, 3, 8, 17))), dt)
    r = rng.random()
    if t.dim() == 3 and r < 0.3:
        bb = g.new_input((t.shape[0], k, rng.choice((1, 5, 16))), dtype=dt)
        return f"torch.bmm({a}, {bb})", "bmm", "matmul"
    if r < 0.6:
        return f"{a} @ {b}", "matmul", "matmul"
    if r < 0.8:
        return f"torch.matmul({a}, {b})", "matmul", "matmul"
    return f"F.linear({a}, {b}.t())", "linear", "matmul"


MATMUL_BUILDERS = [matmul]

"""Inductor (and every backend that decomposes): bilinear upsampling of a tensor holding one infinity gives NaN where eager and fp64 give inf: the decomposition interpolates as v0 + (v1 - v0) * t, which is inf - inf when a tap is infinite, where eager's w0 * v0 + w1 * v1 is inf. Exit 1 while it reproduces."""
import torch
import torch.nn.functional as F

print("torch", torch.__version__)


def f(x):
    return F.interpolate(x, scale_factor=(0.5, 0.3), mode="bilinear", align_corners=False)


x = torch.ones(1, 1, 2, 17)
x[0, 0, 0, 7] = float("inf")  # the taps of output column 2 are input columns 7 and 8
e, c, r = f(x), torch.compile(f)(x), f(x.double())
print("eager   ", e[0, 0, 0].tolist())
print("compiled", c[0, 0, 0].tolist())
print("fp64    ", r[0, 0, 0].tolist())
raise SystemExit(0 if torch.equal(e.isnan(), c.isnan()) else 1)

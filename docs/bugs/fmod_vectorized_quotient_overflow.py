"""Inductor, C++ on CPU (and eager's own vectorized loop): float32 fmod is NaN when |a / b| overflows: fmod(0.436, 1.4e-45) is NaN compiled, 0 eager on a short tensor and by C99 fmod (which is exact); the vector kernel calls Sleef_fmodf, undefined for huge quotients (upstream pytorch#193753). Eager gives the same NaN once the tensor is long enough (16+) to take its vector loop. Exit 1 while it reproduces."""
import math

import torch

print("torch", torch.__version__)


def f(a, b):
    return torch.fmod(a, b)


a = torch.tensor([0.4359414875507355, -0.5619708895683289, -1.7e38, 5.0] * 2)
b = torch.tensor([1.401298464324817e-45, -1.401298464324817e-45, 0.030055701732635498, 3.0] * 2)
eager = f(a, b)
compiled = torch.compile(f, backend="inductor")(a, b)
c99 = torch.tensor([math.fmod(x, y) for x, y in zip(a.tolist(), b.tolist())])
print("a             ", a[:4].tolist())
print("b             ", b[:4].tolist())
print("eager         ", eager[:4].tolist())
print("compiled      ", compiled[:4].tolist())
print("C99 fmod      ", c99[:4].tolist())
print("eager, 16x len", f(a.repeat(8), b.repeat(8))[:4].tolist(), "(eager's vector loop: the same NaN)")
raise SystemExit(0 if torch.equal(compiled, c99) else 1)

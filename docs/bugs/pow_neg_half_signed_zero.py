"""Eager is the wrong side: `x ** -0.5` takes the pow kernel's rsqrt shortcut, so eager gives -inf at -0.0 and NaN at -inf, where IEEE 754 / C99 pow (Annex F.9.4.4: pow(+-0, y<0 not an odd integer) = +inf, pow(-inf, y<0 not an odd integer) = +0), Python's math.pow and NumPy give +inf and +0; torch.compile (Inductor calls pow) agrees with C99. Exit 1 while eager differs from C99 pow."""
import math

import torch


def f(x):
    return x ** -0.5


x = torch.tensor([-0.0, float("-inf"), 0.0, 4.0])
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
c99 = [math.pow(v, -0.5) if v != 0 else math.inf for v in x.tolist()]  # math.pow raises at 0: C99 returns +inf
print("torch", torch.__version__)
print("input    ", x.tolist())
print("eager    ", eager.tolist())
print("compiled ", compiled.tolist())
print("C99 pow  ", c99)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))


eager_ok = all(same(a, b) for a, b in zip(eager.tolist(), c99))
print("eager is", "right" if eager_ok else "WRONG", "per C99 pow; compiled is",
      "right" if all(same(a, b) for a, b in zip(compiled.tolist(), c99)) else "wrong")
raise SystemExit(0 if eager_ok else 1)

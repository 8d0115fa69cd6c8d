"""Inductor CPU: vectorized float remainder is a - floor_divide(a, b) * b: NaN for an infinite divisor (eager: the dividend), 0 for large quotients (1e20 % 3 is 2 eager, 0 compiled). Exit 1 while it reproduces."""
import torch


def f(a, b):
    return torch.remainder(a, b)


a = torch.tensor([5.5, -5.5, 1e20, 3e9, 7.0, 1.0, 0.25, 100.0])
b = torch.tensor([float("inf"), float("-inf"), 3.0, 7.0, 0.7, 0.1, 1.0, 6.0])
eager = f(a, b)
compiled = torch.compile(f, backend="inductor")(a, b)
print("torch", torch.__version__)
print("a       ", a.tolist())
print("b       ", b.tolist())
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
print("fp64    ", f(a.double(), b.double()).tolist())
raise SystemExit(0 if torch.allclose(eager, compiled, rtol=1e-5, equal_nan=True) else 1)

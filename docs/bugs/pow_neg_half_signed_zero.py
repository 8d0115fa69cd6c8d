"""Inductor CPU: `x ** -0.5` gives +inf at -0.0 (eager -inf) and 0.0 at -inf (eager NaN). Exit 1 while it reproduces."""
import torch


def f(x):
    return x ** -0.5


x = torch.tensor([-0.0, float("-inf"), 0.0, 4.0])
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
ref = f(x.double())
print("torch", torch.__version__)
print("input   ", x.tolist())
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
print("fp64    ", ref.tolist())
same = (eager == compiled) | (eager.isnan() & compiled.isnan())
raise SystemExit(0 if bool(same.all()) else 1)

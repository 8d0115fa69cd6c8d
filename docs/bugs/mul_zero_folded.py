"""Inductor: float `x * 0` folded to 0, so inf and NaN inputs give 0 instead of NaN (reached from relu rewritten as where(x > 0, x, x * 0)). Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.where(x > 0, x, x * 0)


x = torch.tensor([float("-inf"), float("nan"), -1.0, 2.0])
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

"""Inductor CPU: std and var of float32 rows accumulate the squared deviations in float32, which overflows where the result is finite: std of [1e30, -1e30, 2e30, 0] is inf or NaN compiled, 1.29e30 eager (eager CPU accumulates float32 in double) and in fp64; a var of 7.5e37 from 1000 values at 1.5e19 is NaN compiled. Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)


def f(x, y):
    return x.std(-1), y.var(-1)


x = torch.tensor([[1e30, -1e30, 2e30, 0.0]])
y = torch.linspace(-1.5e19, 1.5e19, 1000)[None]
eager, compiled = f(x, y), torch.compile(f)(x, y)
print("eager   ", [t.item() for t in eager])  # [1.29e30, 7.52e37]
print("compiled", [t.item() for t in compiled])
print("fp64    ", [t.item() for t in f(x.double(), y.double())])
raise SystemExit(0 if all(torch.allclose(a, b, rtol=1e-5) for a, b in zip(eager, compiled)) else 1)

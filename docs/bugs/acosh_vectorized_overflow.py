"""Inductor CPU: vectorized acosh (Vectorized::acosh, SLEEF) overflows for x above ~1.8e19: acosh(2e19) is inf compiled, 45.1 eager and in fp64. Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.acosh(x)


x = torch.tensor([2.0, 1e10, 1e19, 2e19, 1e25, 1e30, 3e38, 5.0])
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
print("torch", torch.__version__)
print("input   ", x.tolist())
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
print("fp64    ", f(x.double()).tolist())
raise SystemExit(0 if torch.allclose(eager, compiled, rtol=1e-5) else 1)

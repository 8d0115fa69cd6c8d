"""Inductor CPU: int16 `abs` fused into a float op does not wrap: abs(-32768) + 1.0 is +32769 compiled, -32767 eager. Exit 1 while it reproduces."""
import torch


def f(x):
    return (x.abs() + 1.0) * 0.5


x = torch.tensor([-32768, -5, 7, 32767], dtype=torch.int16)
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
print("torch", torch.__version__)
print("input   ", x.tolist())
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
raise SystemExit(0 if torch.equal(eager, compiled) else 1)

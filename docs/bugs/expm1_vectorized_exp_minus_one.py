"""Inductor CPU: vectorized expm1 is emitted as exp(x) - 1, so small arguments lose all precision: expm1(1e-8) is 0 compiled, 1e-8 eager (also ELU/SELU/CELU, which decompose to expm1). Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.expm1(x)


x = torch.tensor([1e-8, -1e-8, 1e-5, -3e-7, 1e-3, 0.5, 2.0, -1.0] * 2)
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
ref = f(x.double())
print("torch", torch.__version__)
print("input   ", x[:8].tolist())
print("eager   ", eager[:8].tolist())
print("compiled", compiled[:8].tolist())
print("fp64    ", ref[:8].tolist())
rel = ((compiled.double() - ref).abs() / ref.abs()).max().item()
print("max relative error of compiled vs fp64:", rel)
raise SystemExit(1 if rel > 1e-4 else 0)

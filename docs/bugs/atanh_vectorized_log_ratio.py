"""Inductor CPU: vectorized atanh is emitted as 0.5 * log((1 + x) / (1 - x)), so small arguments lose all precision: atanh(1e-8) is 0 compiled, 1e-8 eager. Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.atanh(x)


x = torch.tensor([1e-8, -1e-8, 1e-5, -3e-7, 1e-3, 0.5, 0.9, -0.25] * 2)
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

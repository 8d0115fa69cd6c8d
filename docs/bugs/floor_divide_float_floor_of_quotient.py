"""Inductor: float floor division is lowered to floor(a / b), not eager's fmod-based algorithm: 0.5 // 0.1 is 5 compiled, 4 eager (and Python); inf // 0.1 is inf compiled, NaN eager. Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.floor_divide(x, 0.1)


x = torch.tensor([0.5, 1.5, 2.5, 3.0, 1.0, float("inf"), float("-inf"), -0.5])
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
print("torch", torch.__version__)
print("input   ", x.tolist())
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
print("python  ", [v // 0.1 if abs(v) != float("inf") else float("nan") for v in x.tolist()])
raise SystemExit(0 if torch.equal(eager.nan_to_num(7.0), compiled.nan_to_num(7.0)) else 1)

"""Inductor CPU: erfinv near +-1 loses accuracy: for float64 x = 1 - 2**-53 it is 5.86394853 compiled, 5.86358475 eager and exact (a relative error of 6e-5 where float64 resolves 1e-16); the error grows toward +-1 (9e-9 at 1 - 1e-10), float32 too (3.83254 against 3.83251 at 1 - 2**-24). Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)
x = torch.tensor([1 - 2**-53, -(1 - 2**-53), 1 - 6e-10, 0.5], dtype=torch.float64)
eager, compiled = torch.erfinv(x), torch.compile(torch.erfinv)(x)
print("input   ", x.tolist())
print("eager   ", eager.tolist())  # [5.863584748755168, -5.863584748755168, 4.377295595981762, 0.4769362762044699]
print("compiled", compiled.tolist())
raise SystemExit(0 if torch.allclose(eager, compiled, rtol=1e-12, atol=0) else 1)

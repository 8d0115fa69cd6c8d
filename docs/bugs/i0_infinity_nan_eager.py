"""Eager `torch.i0` (and `torch.special.i1`) of an infinity is NaN, on CPU and CUDA and every float dtype, where I0(+-inf) = +inf (SciPy, and compiled on CUDA through libdevice, agree); the Cephes-style formula computes inf / inf. Exit 1 while it reproduces."""
import math

import torch

x = torch.tensor([float("inf"), float("-inf"), 2.5])
got = torch.i0(x)
print("torch", torch.__version__)
print(f"i0({x.tolist()}) = {got.tolist()}; expected [inf, inf, {torch.i0(torch.tensor(2.5, dtype=torch.float64)).item():.6g}]")
raise SystemExit(1 if any(math.isnan(v) for v in got[:2].tolist()) else 0)

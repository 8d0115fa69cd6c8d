"""Inductor's post-grad pattern `pointless_cumsum_replacement` rewrites a cumsum of `ones_like`/`full` into an arange and drops cumsum's `dtype=`: `torch.cumsum(torch.ones_like(x), -1, dtype=torch.float32)` of an int64 x is int64 compiled, float32 eager (the values agree). Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.cumsum(torch.ones_like(x), -1, dtype=torch.float32)


x = torch.arange(-4, 4, dtype=torch.int64)
e, c = f(x), torch.compile(f, backend="inductor")(x)
print("torch", torch.__version__)
print(f"eager {e.dtype} {e.tolist()}")
print(f"compiled {c.dtype} {c.tolist()}")
raise SystemExit(1 if e.dtype != c.dtype or not torch.equal(e, c.to(e.dtype)) else 0)

"""Inductor (the joint-graph pass scatter_upon_const_tensor): `full(...).scatter(dim, index, value)` of a float16/bfloat16 constant with a Python scalar is rewritten to `where(mask, value, fill)`, which promotes to float32: `torch.ones_like(x).scatter(1, i, 0.0)` of a float16 x is float32 compiled, float16 eager, and the float32 spreads to the program's outputs. Exit 1 while it reproduces."""
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", device)


def f(x, i):
    # a multiclass hinge loss's mask: every class but the target
    return x * torch.ones_like(x).scatter(1, i.unsqueeze(1), 0.0)


x = torch.randn(64, 10, device=device).half()
i = torch.randint(0, 10, (64,), device=device)
e, c = f(x, i), torch.compile(f)(x, i)
print("eager dtype   ", e.dtype)
print("compiled dtype", c.dtype)
raise SystemExit(1 if e.dtype != c.dtype else 0)

"""Inductor (CPU and CUDA): torch.any of a uint8 tensor returns bool under torch.compile, where eager keeps uint8 (torch.any's documented uint8 -> uint8), so arithmetic on the result changes: any(x, dim) - 2 wraps to 255 in uint8 eagerly and is -1 (int64) compiled. torch.all keeps uint8 compiled. Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.any(x.expand(16, 3), dim=-2), torch.any(x.expand(16, 3), dim=-2) - 2, torch.all(x.expand(16, 3), dim=0)


device = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, device)
x = torch.full((16, 1), 7, dtype=torch.uint8, device=device)
e, c = f(x), torch.compile(f)(x)
for name, a, b in zip(("any(x, dim=-2)", "any(x, dim=-2) - 2", "all(x, dim=0)"), e, c):
    print(f"{name:20s} eager {a.dtype} {a.tolist()}   compiled {b.dtype} {b.tolist()}")
same = all(a.dtype == b.dtype and torch.equal(a.to(torch.int64), b.to(torch.int64)) for a, b in zip(e, c))
raise SystemExit(0 if same else 1)

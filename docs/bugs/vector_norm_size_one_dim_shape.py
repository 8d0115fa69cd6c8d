"""Inductor (the vector_norm decomposition in torch/_refs/linalg): linalg.vector_norm / Tensor.norm over a negative dim of size 1 keeps the dim: compiled (2, 1, 1) where eager gives (2, 1), and a sum with another such norm broadcasts to (2, 2, 1). Exit 1 while it reproduces."""
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", device)


def f(x):
    return torch.linalg.vector_norm(x, ord=2, dim=-1), x.norm(p=1, dim=-1) + torch.linalg.vector_norm(x, ord=float("inf"), dim=-1)


x = torch.randn(2, 1, 1, device=device)
e, c = f(x), torch.compile(f)(x)
print("eager shapes   ", [tuple(t.shape) for t in e])
print("compiled shapes", [tuple(t.shape) for t in c])
raise SystemExit(1 if [t.shape for t in e] != [t.shape for t in c] else 0)

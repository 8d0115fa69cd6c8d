"""Inductor's variance (var, std) of a one-element tensor is 0 for a NaN or infinite element: the scalar output takes the Welford lowering, whose M2 starts at 0 and has nothing to combine with, so the NaN never reaches it; eager (and NumPy) give NaN (inf - inf; NaN propagates). A larger tensor, or a size-1 reduction with more outputs, is NaN as eager. `aot_eager_decomp_partition` gives NaN, so Inductor's lowering. Exit 1 while it reproduces."""
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", device)


def f(x):
    return torch.std(x, dim=(0, 2), correction=0), torch.var(x, dim=(0, 2), correction=0)


bad = 0
for v in (float("nan"), float("inf")):
    x = torch.full((1, 1, 1), v, device=device)
    torch._dynamo.reset()
    e, c = f(x), torch.compile(f)(x)
    print(f"x = [[[{v}]]]: eager", [t.item() for t in e], "compiled", [t.item() for t in c])  # eager nan, nan
    bad += not all(torch.equal(a.isnan(), b.isnan()) for a, b in zip(e, c))
raise SystemExit(1 if bad else 0)

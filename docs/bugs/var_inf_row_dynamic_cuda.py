"""Inductor on CUDA, dynamic=True: the variance of a 7-element row holding one +inf is inf compiled, NaN eager, in fp64 and in numpy (inf - inf). Static shapes give NaN. Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
g = torch.Generator().manual_seed(0)
x = torch.rand(7, 7, 7, generator=g) * 6
x[0, 0] = torch.tensor([2.9112329, 2.8608360, 4.5745029, 4.2261753, 6.6634955, 6.3657145, float("inf")])
x[2, 1] = torch.tensor([5.1967897, 5.6929975, 5.9141860, 5.9190097, 3.4062045, 6.5354099, float("inf")])
x = x.cuda()


def f(x):
    return torch.var(x, dim=-1)


print("torch", torch.__version__)
eager = f(x)
bad = False
for dynamic in (False, True):
    torch._dynamo.reset()
    compiled = torch.compile(f, dynamic=dynamic)(x)
    n = int((torch.isnan(eager) != torch.isnan(compiled)).sum())
    print(f"dynamic={dynamic}: row [0, 0] eager {eager[0, 0].item()}, compiled {compiled[0, 0].item()}, "
          f"fp64 {f(x.double())[0, 0].item()}; NaN positions differ at {n} rows")
    bad |= n > 0
raise SystemExit(1 if bad else 0)

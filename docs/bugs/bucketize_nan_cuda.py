"""Inductor, Triton on CUDA: bucketize and searchsorted put NaN before every boundary (bucket 0), where eager CUDA and CPU (eager and compiled) put it after the last (NaN sorts last). Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
device = "cuda"
print("torch", torch.__version__, "device", device)
b = torch.linspace(-3.0, 3.0, 255, device=device)
x = torch.tensor([float("nan"), 0.5, float("inf"), -float("inf"), 4.0], device=device)
f = lambda x, b: torch.bucketize(x, b)  # noqa: E731
e, c = f(x, b), torch.compile(f)(x, b)
print("bucketize    eager", e.tolist(), "compiled", c.tolist())
torch._dynamo.reset()
g = torch.sort(torch.randn(4, 8, device=device), -1).values
q = torch.tensor([[float("nan"), 0.0]] * 4, device=device)
h = lambda g, q: torch.searchsorted(g, q, right=True)  # noqa: E731
e2, c2 = h(g, q), torch.compile(h)(g, q)
print("searchsorted eager", e2[:, 0].tolist(), "compiled", c2[:, 0].tolist())
raise SystemExit(1 if (not torch.equal(e, c) or not torch.equal(e2, c2)) else 0)

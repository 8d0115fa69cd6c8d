"""Inductor, Triton on CUDA: std over a dim of size 1 with a correction above 1 (degrees of freedom below 0) is inf compiled, NaN eager (and on CPU, eager and compiled). Exit 1 while it reproduces, 77 without a GPU."""
import warnings

import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
warnings.simplefilter("ignore")  # std(): degrees of freedom is <= 0
print("torch", torch.__version__)
x = torch.linspace(-2.0, 2.0, 20, device="cuda").reshape(1, 4, 5)


def f(x):
    u = x.unfold(2, 2, 2)
    return (u * u).std(0, correction=2)


e, c = f(x), torch.compile(f)(x)
print("eager   ", e.flatten()[:4].tolist())
print("compiled", c.flatten()[:4].tolist())
print("cpu eager", f(x.cpu()).flatten()[:4].tolist())
raise SystemExit(0 if torch.equal(e.isnan(), c.isnan()) and torch.equal(e.isinf(), c.isinf()) else 1)

"""Inductor, C++ on CPU: int32 arithmetic in a scalar (not vectorized) kernel is signed C++ arithmetic, whose overflow is undefined, so the C++ compiler may rewrite `x + 7 >= 0` as `x >= -7`: `(a + 7).flip(0) >= 0` is True compiled at a = 2**31 - 1, where eager wraps to -2147483642 and gives False (the flip takes the kernel off the vector path). Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)


def f(a):
    return (a + 7).flip(0) >= 0


a = torch.full((64,), 2**31 - 1, dtype=torch.int32)
e, c = f(a), torch.compile(f)(a)
print("a + 7, eager:", (a + 7)[0].item())
print("eager   ", e[:4].tolist())
print("compiled", c[:4].tolist())
raise SystemExit(0 if torch.equal(e, c) else 1)

"""Inductor, Triton on CUDA: signbit of a float64 -0.0 is False compiled, True eager (the Triton code compares x < 0 for float64 where it calls libdevice.signbit for float32). Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__)
x = torch.tensor([-0.0, 0.0, -1.5, 2.0, float("-inf")], device="cuda")


def f(x):
    return torch.signbit(x.double())


e, c = f(x), torch.compile(f, dynamic=True)(x)
print("input   ", x.tolist())
print("eager   ", e.tolist())
print("compiled", c.tolist())
raise SystemExit(0 if torch.equal(e, c) else 1)

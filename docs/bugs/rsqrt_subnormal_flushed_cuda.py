"""Inductor, Triton on CUDA: rsqrt flushes float32 subnormal inputs to zero: rsqrt(5.9e-39) is inf compiled, 1.3e19 eager (and in fp64), where eager CUDA is exact (sqrt, reciprocal and pow of the same values agree). Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__)
x = torch.tensor([5.9e-39, 1e-40, 1e-44, 1.0], device="cuda")
e, c = torch.rsqrt(x), torch.compile(torch.rsqrt)(x)
print("input   ", x.tolist())
print("eager   ", e.tolist())
print("compiled", c.tolist())
print("fp64    ", torch.rsqrt(x.double()).tolist())
raise SystemExit(0 if torch.allclose(e, c, rtol=1e-5) else 1)

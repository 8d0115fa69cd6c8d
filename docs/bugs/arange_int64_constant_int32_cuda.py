"""Inductor, Triton on CUDA: int64 index arithmetic with a constant above 2**31 (arange(n) * 2147483659 // 3) fails to compile ('Scalar 2147483659 is out of range for type int32'), where eager and Inductor CPU run. Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__)
f = lambda x: x + torch.arange(15, device=x.device) * 2147483659 // 3  # noqa: E731
x = torch.zeros(15, dtype=torch.int64, device="cuda")
e = f(x)
try:
    c = torch.compile(f)(x)
    print("eager", e[:4].tolist(), "compiled", c[:4].tolist())
    raise SystemExit(0 if torch.equal(e, c) else 1)
except Exception as ex:
    print("eager", e[:4].tolist(), "compiled raises", type(ex).__name__, str(ex).splitlines()[-1][:160] if str(ex) else "")
    raise SystemExit(1)

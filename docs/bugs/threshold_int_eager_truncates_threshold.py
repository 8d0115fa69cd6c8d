"""Eager (ATen CPU threshold kernel): torch.threshold of an integer tensor with a non-integer threshold converts the threshold to the integer dtype first (-1.5 -> -1, -0.5 -> 0), so threshold(x, -1.5, 0) replaces -1 (which is > -1.5 and must be kept) and threshold(x, -0.5, 7) replaces 0; compiled (decomposition where(x <= th, v, x) compared in float) keeps them, as documented (y = x if x > threshold else value). Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)
x = torch.tensor([-2, -1, 0, 1, 5], dtype=torch.int8)


def f(x, th, v):
    return torch.threshold(x, th, v)


ok = True
for th, v in [(-1.5, 0), (-0.5, 7)]:
    e = f(x, th, v)
    c = torch.compile(f)(x, th, v)
    ref = torch.where(x.double() > th, x.double(), float(v)).to(x.dtype)  # documented: x if x > threshold else value
    print(f"threshold(x, {th}, {v}) x={x.tolist()}: eager {e.tolist()}  compiled {c.tolist()}  documented {ref.tolist()}")
    ok &= torch.equal(e, ref)
raise SystemExit(0 if ok else 1)

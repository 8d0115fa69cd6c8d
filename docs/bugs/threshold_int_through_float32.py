"""Decomposition (torch/_refs/nn/functional threshold, used by Inductor): `torch.threshold` of an integer tensor with a float `value` is `where(a <= threshold, value, a)`, which promotes the kept integers to float32 and casts back: int32/int64 values above 2^24 lose their low bits and 2147483647 becomes -2147483648 (eager keeps them exactly). `aot_eager_decomp_partition` shows it too, so the decomposition. Exit 1 while it reproduces."""
import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", device)


def f(x):
    return torch.threshold(x, 0.1, 20.0)  # F.threshold(x, threshold=0.1, value=20.0)


x = torch.tensor([2147483647, 16777217, 123456789, 5, -7], dtype=torch.int32, device=device)
e, c = f(x), torch.compile(f)(x)
print("eager   ", e.tolist())
print("compiled", c.tolist())
raise SystemExit(1 if not torch.equal(e, c) else 0)

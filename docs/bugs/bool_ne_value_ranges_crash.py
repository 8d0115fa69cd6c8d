"""Inductor (CPU and CUDA): a comparison of two boolean masks built from index expressions (`le != le`, le = arange[None] <= arange[:, None]) aborts in the bounds analysis (ValueRanges.eq orders sympy Booleans: InductorError TypeError), where eager runs. Exit 1 while it reproduces."""
import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", dev)


def f():
    a = torch.arange(128, device=dev)
    le = a[None, :] <= a[:, None]  # a causal mask
    return le != le


print("eager: any True", bool(f().any()))
try:
    c = torch.compile(f)()
except Exception as e:  # noqa: BLE001 - the compile error is the bug
    print("compiled raised", type(e).__name__, str(e).strip().splitlines()[0][:200])
    raise SystemExit(1)
print("compiled ran, equal:", torch.equal(c, f()))
raise SystemExit(0)

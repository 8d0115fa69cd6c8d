"""Inductor (CPU and CUDA): `torch.where(cond, mask, torch.logical_xor(mask, mask))` over boolean masks built from index expressions aborts in the bounds analysis: logical_xor gets the unknown numeric range (-oo, oo), and ValueRanges.where, seeing a boolean true branch, takes sympy.And of its bounds (InductorError: TypeError: expecting bool or Boolean, not `-oo`), where eager runs. Exit 1 while it reproduces."""
import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", dev)


def f():
    a = torch.arange(16, device=dev)
    q, k = a[None, :], a[:, None]
    le = q <= k  # a causal mask, as a decoder's attention builds it
    return torch.where(q > k, le, torch.logical_xor(le, le))


print("eager: any True", bool(f().any()))
try:
    c = torch.compile(f)()
except Exception as e:  # noqa: BLE001 - the compile error is the bug
    print("compiled raised", type(e).__name__, str(e).strip().splitlines()[0][:200])
    raise SystemExit(1)
print("compiled ran, equal:", torch.equal(c, f()))
raise SystemExit(0)

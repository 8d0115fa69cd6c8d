"""Inductor CPU (torch/_inductor/kernel/bmm.py, tuned_bmm): a same-dtype integer bmm/matmul whose first matrix has one row (or second one column) is lowered to a broadcast mul and a sum, and the sum's int64 accumulator leaks out: int8/int16/int32/uint8 in, int64 out, and where eager's int8 result wraps, the compiled one does not. `aot_eager_decomp_partition` keeps the dtype, so Inductor's lowering. Exit 1 while it reproduces."""
import torch

device = "cpu"
print("torch", torch.__version__, "device", device)


def f(u, x):
    return torch.matmul(u, x.transpose(1, 2))  # a 1-D @ 3-D product: bmm with M == 1


u = torch.full((64,), 3, dtype=torch.int8)
x = torch.full((2, 4, 64), 2, dtype=torch.int8)
e, c = f(u, x), torch.compile(f)(u, x)
print("eager   ", e.dtype, e[0, :2].tolist())  # int8: 64 * 6 = 384 wraps to -128
print("compiled", c.dtype, c[0, :2].tolist())
raise SystemExit(1 if (c.dtype != e.dtype or not torch.equal(e.long(), c.long())) else 0)

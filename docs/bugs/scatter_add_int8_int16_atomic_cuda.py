"""Inductor, Triton on CUDA: scatter_add into an int16, int8 or uint8 tensor fails to compile (`atomic_add does not support int16`: Triton's atomic_add has no 8- or 16-bit integer form), where eager CUDA runs; int32 compiles. Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__)
bad = []
for dt in (torch.int16, torch.int8, torch.uint8, torch.int32):
    x = torch.zeros(31, dtype=dt, device="cuda")
    i = torch.tensor([3, 5, 3], device="cuda")
    s = torch.tensor([7, 1, 2], dtype=dt, device="cuda")
    f = lambda x, i, s: x.scatter_add(0, i, s)  # noqa: E731
    torch._dynamo.reset()
    e = f(x, i, s)
    try:
        c = torch.compile(f)(x, i, s)
        print(dt, "eager", e[:6].tolist(), "compiled", c[:6].tolist())
        if not torch.equal(e, c):
            bad.append(str(dt))
    except Exception as ex:
        print(dt, "eager", e[:6].tolist(), "compiled raises", type(ex).__name__, str(ex).splitlines()[-1][:120] if str(ex) else "")
        bad.append(str(dt))
raise SystemExit(1 if bad else 0)

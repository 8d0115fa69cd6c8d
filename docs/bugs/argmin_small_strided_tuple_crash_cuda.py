"""Inductor, Triton on CUDA: argmin/argmax over every dim of a small tensor (fewer than 8 elements, so the reduction is unrolled) fails to compile with `TypeError: Unknown type: <class 'tuple'>`: the loader's (value, index) pair is wrapped in another pair; `torch.tensor([[2., -2., 7., 0., 6.]]).argmax()` eager gives 2. Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__)
x = torch.tensor([[2.0, -2.0, 7.0, 0.0, 6.0]], device="cuda")
e = x.argmax()
try:
    c = torch.compile(lambda t: t.argmax(), backend="inductor")(x)
except Exception as err:  # noqa: BLE001 - the bug is the crash
    print(f"eager {e.item()}, compiled: {type(err).__name__}: {str(err).splitlines()[0][:200]}")
    raise SystemExit(1)
print(f"eager {e.item()}, compiled {c.item()}")
raise SystemExit(0 if torch.equal(e, c) else 1)

"""Inductor, Triton on CUDA: argmax over an int8/uint8 row of 1000 returns indices truncated to 8 bits (e.g. 648 -> 136, 345 -> 89, 141 -> -115). Exit 1 while it reproduces, 77 without a GPU (CPU Inductor gets it right)."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
device = "cuda"


def f(x):
    return torch.argmax(x, dim=-1)


torch.manual_seed(0)
bad = False
print("torch", torch.__version__, "device", device)
for dtype in (torch.int8, torch.uint8):
    x = (torch.randn(256, 1000, device=device) * 100).to(dtype)
    eager = f(x)
    compiled = torch.compile(f, backend="inductor")(x)
    torch._dynamo.reset()
    wrong = (eager != compiled).nonzero().flatten()
    print(dtype, "eager", eager[:6].tolist(), "compiled", compiled[:6].tolist(), f"{wrong.numel()} of 256 rows differ")
    bad |= bool(wrong.numel())
raise SystemExit(1 if bad else 0)

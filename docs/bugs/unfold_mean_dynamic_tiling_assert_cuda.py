"""Inductor, Triton on CUDA: the mean over two Tensor.unfold window dims compiled with dynamic=True aborts in the coalesce tiling analysis (tiling_utils.get_pw_red_splits: AssertionError), where eager runs. Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__, "device cuda")


def f(x):
    return x.unfold(2, 16, 8).unfold(3, 16, 8).mean(dim=(-1, -2))


x = torch.randn(7, 17, 17, 17, device="cuda")
print("eager shape", tuple(f(x).shape))
try:
    c = torch.compile(f, dynamic=True)(x)
except Exception as e:  # noqa: BLE001 - the compile error is the bug
    print("compiled raised", type(e).__name__, str(e).strip().splitlines()[0][:200])
    raise SystemExit(1)
print("compiled ran, max |diff|", (c - f(x)).abs().max().item())
raise SystemExit(0)

"""Inductor, Triton on CUDA: `torch.div(a, b, rounding_mode="trunc")` is `trunc(a / b)` with Triton's approximate float32 division, so an exact quotient can come out one ulp low and truncate one too far: x / x is 0 compiled for some x (eager 1), and 148 / 37 is 3 (eager 4). Exit 1 while it reproduces, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
print("torch", torch.__version__)


def f(a, b):
    return torch.div(a, b, rounding_mode="trunc")


a = torch.tensor([148.0, 1073.0, 2112.0, -0.4338788092136383, 0.7935083508491516], device="cuda")
b = torch.tensor([37.0, 37.0, 33.0, -0.4338788092136383, 0.7935083508491516], device="cuda")
e, c = f(a, b), torch.compile(f, backend="inductor")(a, b)
print("a / b   ", (a / b).tolist())
print("eager   ", e.tolist())
print("compiled", c.tolist())
raise SystemExit(0 if torch.equal(e, c) else 1)

"""With `dynamic=True`, a convolution whose output is added to a depthwise convolution of itself fails to compile on CPU: `LoweringException: ValueError: Exponent must be non-negative.` (the sizes' expression holds a negative power while Inductor lowers the add); `y = conv2d(x, w); y + conv2d(y, w_dw, groups=C)` runs eagerly and under `dynamic=False`. Exit 1 while it reproduces."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
w = torch.randn(4, 3, 3, 3)
w_dw = torch.randn(4, 1, 3, 3)


def f(x):
    y = F.conv2d(x, w, padding=1)
    return y + F.conv2d(y, w_dw, padding=1, groups=4)


x = torch.randn(7, 3, 17, 17)
e = f(x)
print("torch", torch.__version__)
try:
    c = torch.compile(f, backend="inductor", dynamic=True)(x)
except Exception as err:  # noqa: BLE001 - the bug is the crash
    print(f"eager {tuple(e.shape)}; compiled: {type(err).__name__}: {str(err).splitlines()[0][:200]}")
    raise SystemExit(1)
print(f"eager and compiled agree: {torch.allclose(e, c, atol=1e-3)}")
raise SystemExit(0 if torch.allclose(e, c, atol=1e-3) else 1)

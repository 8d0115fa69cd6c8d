"""Inductor CPU: an in-place op written through a slice of the flattened input (`x.view(-1)[:3].sin_()`; `mul_` too), then `softmax(x, -1)`, fails to compile: the C++ backend's outer-loop fusion (`try_outer_loop_fusion_with_local_buf`) asks the softmax's loops where they read the in-place write's output buffer, and they read the buffer it mutates instead (`InductorError: KeyError: 'buf1'`; a compile crash, not silent). Eager runs it; `x[0, :3].sin_()` compiles. Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)


def f(x):
    x.view(-1)[:3].sin_()
    return torch.softmax(x, -1)


x = torch.randn(2, 8, generator=torch.Generator().manual_seed(0))
eager = f(x.clone())
try:
    compiled = torch.compile(f)(x.clone())
except Exception as e:  # the compile error is the bug
    print("compiled raised", type(e).__name__, str(e).strip().splitlines()[0][:200])
    compiled = None
if compiled is not None:
    print("compiled ran, equal:", torch.allclose(eager, compiled))
raise SystemExit(1 if compiled is None else 0)

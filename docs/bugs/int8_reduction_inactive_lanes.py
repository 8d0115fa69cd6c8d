"""Inductor CPU: vectorized reductions over uint8/int8 fold in the inactive lanes of partial vector loads (filled with 1): a mod-256 sum gets +1 per inactive lane and iteration, amin gets 1. Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.sum(x, dim=-1, dtype=torch.uint8), torch.amin(x, dim=-1)


x = (torch.arange(4 * 40).reshape(4, 40) % 97 + 3).to(torch.uint8)   # every byte >= 3
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
print("torch", torch.__version__, torch.backends.cpu.get_cpu_capability())
print("sum  eager   ", eager[0].tolist(), " compiled", compiled[0].tolist())
print("amin eager   ", eager[1].tolist(), " compiled", compiled[1].tolist())
raise SystemExit(0 if all(torch.equal(e, c) for e, c in zip(eager, compiled)) else 1)

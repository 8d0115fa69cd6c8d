"""Inductor's joint-graph softmax patterns (`div_softmax_pattern` / `mul_softmax_pattern` in torch/_inductor/fx_passes/joint_graph.py) compute `x - amax(x)` in the input's integer dtype, where eager divides (or multiplies) to float first: `torch.softmax(x / 0.5, -1)` of int8 [-128, 127, 0, 1] wraps (127 - (-128) overflows int8) and gives [0.88, 0.12, 0, 0] compiled, [0, 1, 0, 0] eager; every integer dtype. Exit 1 while it reproduces."""
import torch


def f(x):
    return torch.softmax(x / 0.5, -1), torch.softmax(x * 2.0, -1)


x = torch.tensor([[-128, 127, 0, 1]], dtype=torch.int8)
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
print("torch", torch.__version__)
for name, e, c in zip(("x / 0.5", "x * 2.0"), eager, compiled):
    print(f"softmax({name}): eager {[round(v, 4) for v in e[0].tolist()]}, compiled {[round(v, 4) for v in c[0].tolist()]}")
raise SystemExit(0 if all(torch.allclose(e, c, atol=1e-6) for e, c in zip(eager, compiled)) else 1)

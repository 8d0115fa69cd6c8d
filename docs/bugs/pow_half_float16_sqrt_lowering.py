"""Inductor lowers x ** 0.5 to sqrt(x) for every dtype: on float16, (-inf) ** 0.5 is NaN compiled where eager (float16 takes ATen's generic pow) and C99 pow give +inf, and (-0.0) ** 0.5 is -0.0 where they give +0.0 (C99 Annex F.9.4.4). Eager float32/float64/bfloat16 take the same sqrt shortcut (cf. ledger #1, x ** -0.5 via rsqrt), so only float16 disagrees with eager. Exit 1 while it reproduces."""
import math

import torch

print("torch", torch.__version__)


def f(x):
    return x ** 0.5


x = torch.tensor([float("-inf"), -0.0, 0.0, 4.0], dtype=torch.float16)
eager = f(x)
compiled = torch.compile(f, backend="inductor")(x)
c99 = [math.inf if v == -math.inf else math.pow(v, 0.5) for v in x.tolist()]
print("input          ", x.tolist())
print("eager float16  ", eager.tolist())
print("compiled       ", compiled.tolist())
print("C99 pow        ", c99)
print("eager float32  ", f(x.float()).tolist(), "(sqrt shortcut in eager too)")


def same(p, q):
    return (math.isnan(p) and math.isnan(q)) or (p == q and math.copysign(1, p) == math.copysign(1, q))


raise SystemExit(0 if all(same(p, q) for p, q in zip(eager.tolist(), compiled.tolist())) else 1)

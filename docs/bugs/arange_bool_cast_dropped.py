"""Inductor's index propagation drops a cast of an index expression to bool (or to a narrower integer): the bool of an arange keeps the arange's values, so `torch.maximum(a.bool(), a)` of `a = arange(-9, 17, 2)` is [-9, -7, -5, ...] compiled, [1, 1, 1, ...] eager; `arange(-2, 3).bool().long()` is [-2, -1, 0, 1, 2] compiled, [1, 1, 0, 1, 1] eager; CPU and CUDA. Exit 1 while it reproduces."""
import torch


def maximum_of_bool():
    a = torch.arange(-9, 17, 2, dtype=torch.float32)
    return torch.maximum(a.bool(), a)


def bool_as_long():
    return torch.arange(-2, 3).bool().long()


print("torch", torch.__version__)
bad = False
for f in (maximum_of_bool, bool_as_long):
    torch._dynamo.reset()
    e, c = f(), torch.compile(f, backend="inductor")()
    print(f"{f.__name__}: eager {e.tolist()}, compiled {c.tolist()}")
    bad |= not torch.equal(e, c)
raise SystemExit(1 if bad else 0)

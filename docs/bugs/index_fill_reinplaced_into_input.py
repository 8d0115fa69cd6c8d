"""Inductor's reinplacing pass writes the result of an out-of-place `x.index_fill(...)` into the graph input x itself, so a later in-place write of x (`x.fill_(0)`) overwrites the value the program returns: `r = x.index_fill(0, i, -1.0); x.fill_(0); return r` returns [0, 0] compiled, [2, -1] eager (aot_eager is right). Exit 1 while it reproduces."""
import torch


def f(x, i):
    r = x.index_fill(0, i, -1.0)
    x.fill_(0)
    return r


x, i = torch.tensor([2.0, 4.0]), torch.tensor([1])
e = f(x.clone(), i)
c = torch.compile(f, backend="inductor")(x.clone(), i)
print("torch", torch.__version__)
print(f"eager {e.tolist()}, compiled {c.tolist()}")
raise SystemExit(0 if torch.equal(e, c) else 1)

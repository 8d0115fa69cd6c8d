"""torch.compile, in AOTAutograd's functionalization (backend="aot_eager" reproduces it, backend="eager" does not): an in-place foreach op whose tensors alias each other is applied as if every update read the values from before the call. Eager updates the entries one after another: _foreach_add_([x, x.flatten(1)], 3) adds 3 twice to x (a view of x is the second entry), compiled once; _foreach_add_([f, t], [y, f]) adds the updated f to t eagerly, the old f compiled. Exit 1 while it reproduces."""
import torch


def twice(x):
    torch._foreach_add_([x, x.flatten(1)], 3)
    return x


def chained(t, y):
    f = torch.full_like(y, 5.0)
    torch._foreach_add_([f, t], [y, f])
    return t


print("torch", torch.__version__)
x, t, y = torch.zeros(2, 3, 4), torch.ones(4), torch.full((4,), 3.0)
e1, c1 = twice(x.clone()), torch.compile(twice)(x.clone())
e2, c2 = chained(t.clone(), y), torch.compile(chained)(t.clone(), y)
print("a view of x in the same list:    eager", e1.flatten()[:3].tolist(), " compiled", c1.flatten()[:3].tolist())
print("an earlier entry as an operand:  eager", e2.tolist(), " compiled", c2.tolist())
raise SystemExit(0 if torch.equal(e1, c1) and torch.equal(e2, c2) else 1)

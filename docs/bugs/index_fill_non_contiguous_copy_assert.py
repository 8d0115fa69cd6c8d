"""`index_fill` of a non-contiguous tensor (a transpose, a stepped slice) fails to compile: its decomposition restores the input's strides with an in-place `copy_` that AOTAutograd's functionalization asserts on (`AssertionError: n=copy_, n.args[0]=permute`); `torch.arange(12.).reshape(4, 3).t().index_fill(-1, [1, 3], 100.)` runs eagerly. Exit 1 while it reproduces."""
import torch


def f(x, i):
    return x.t().index_fill(-1, i, 100.0)


x, i = torch.arange(12.0).reshape(4, 3), torch.tensor([1, 3])
e = f(x, i)
print("torch", torch.__version__)
try:
    c = torch.compile(f, backend="inductor")(x, i)
except Exception as err:  # noqa: BLE001 - the bug is the crash
    print(f"eager {e.tolist()}; compiled: {type(err).__name__}: {str(err).splitlines()[0][:200]}")
    raise SystemExit(1)
print(f"eager {e.tolist()}, compiled {c.tolist()}")
raise SystemExit(0 if torch.equal(e, c) else 1)

"""Inductor, C++ on CPU, dynamic=True: a vectorized argmin/argmax whose flat index holds a floor division (here of a strided window of `unfold`) does not compile: the index is printed into C++ with Python's syntax (`4*x0*((ks0//4)) + x1`), a CppCompileError where eager runs. Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)


def f(x):
    return x.unfold(-1, 4, 4).argmin()


x = torch.randn(2, 4, 5, 5, generator=torch.Generator().manual_seed(0))
print("eager   ", f(x).item())
try:
    print("compiled", torch.compile(f, dynamic=True)(x).item())
except Exception as e:  # torch._inductor.exc.InductorError: CppCompileError
    print("compiled raised", type(e).__name__, str(e).splitlines()[0][:120])
    raise SystemExit(1)
raise SystemExit(0)

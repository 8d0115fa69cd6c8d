"""Eager is the wrong side: index_add on an integer tensor with a float alpha (0.5) runs eagerly with alpha truncated to 0, so nothing is added; torch.add rejects a float alpha on integers ("For integral input tensors, argument alpha must not be a floating point number"), and so does the compiled program (its fake-tensor check). Exit 1 while eager runs the program silently."""
import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"


def f(base, idx, src):
    return torch.index_add(base, 0, idx, src, alpha=0.5)


base = torch.zeros(4, 8, dtype=torch.int8, device=dev)
idx = torch.tensor([0, 2], device=dev)
src = torch.full((2, 8), 4, dtype=torch.int8, device=dev)
print("torch", torch.__version__, dev)
try:
    torch.add(base[:2], src, alpha=0.5)
except RuntimeError as e:
    print("torch.add with the same alpha raises:", str(e).splitlines()[0])
try:
    e = f(base, idx, src)
except RuntimeError as ex:  # the check is there: fixed
    print("eager raises:", str(ex).splitlines()[0])
    raise SystemExit(0)
print("eager runs silently: rows 0 and 2 are", e[0].tolist()[:4], e[2].tolist()[:4], "(alpha truncated to 0)")
try:
    torch.compile(f)(base, idx, src)
    print("compiled runs too")
except Exception as ex:  # noqa: BLE001 - compiled refuses the program, as torch.add's rule says
    print("compiled raises:", type(ex).__name__)
raise SystemExit(1)

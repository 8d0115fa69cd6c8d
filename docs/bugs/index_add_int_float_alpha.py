"""Eager vs torch.compile: index_add on an integer tensor with a float alpha (alpha=0.5) runs eagerly, truncating alpha to 0 so that nothing is added, while the compiled program raises (its fake-tensor check: "alpha argument of type float cannot be safely cast to int"); torch.add on integers rejects a float alpha eagerly. Exit 1 while eager and compiled disagree."""
import torch

dev = "cuda" if torch.cuda.is_available() else "cpu"
print("torch", torch.__version__, "device", dev)


def f(base, idx, src):
    return torch.index_add(base, 0, idx, src, alpha=0.5)


base = torch.zeros(4, 8, dtype=torch.int8, device=dev)
idx = torch.tensor([0, 2], device=dev)
src = torch.full((2, 8), 4, dtype=torch.int8, device=dev)
e = f(base, idx, src)
print("eager: rows 0 and 2 gain", e[0, 0].item(), e[2, 0].item(), "(alpha * 4 = 2 expected, or an error as torch.add gives)")
try:
    c = torch.compile(f)(base, idx, src)
except Exception as ex:  # noqa: BLE001 - the disagreement is the bug
    print("compiled raised", type(ex).__name__, str(ex).strip().splitlines()[0][:160])
    raise SystemExit(1)
print("compiled", c[0, 0].item(), "equal:", torch.equal(c, e))
raise SystemExit(0 if torch.equal(c, e) else 1)

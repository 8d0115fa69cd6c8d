"""`F.adaptive_max_pool1d` (and 2d) under torch.compile, where the windows overlap (input length not a multiple of the output's): a window holding a NaN gets the NaN as its value but the index of its largest non-NaN element, so the backward routes the gradient to that element instead of the NaN's (eager: value and index both the NaN's). Forward values agree; the indices and every gradient through them are silently wrong. Exit 1 while it reproduces."""
import torch
import torch.nn.functional as F

nan = float("nan")
x = torch.tensor([[[0.3, 0.5, nan, 0.2, 0.1, 0.9, 0.4, nan, 0.6, 0.7]]])  # 10 -> 4: windows [0,3) [2,5) [5,8) [7,10)


def pool(t):
    return F.adaptive_max_pool1d(t, 4, return_indices=True)


def grad(fn):
    t = x.clone().requires_grad_()
    fn(t)[0].sum().backward()
    return t.grad


(ev, ei), (cv, ci) = pool(x), torch.compile(pool, backend="inductor")(x)
eg, cg = grad(pool), grad(torch.compile(pool, backend="inductor"))
print("torch", torch.__version__)
print("values   eager", ev.flatten().tolist(), "compiled", cv.flatten().tolist())
print("indices  eager", ei.flatten().tolist(), "compiled", ci.flatten().tolist())
print("gradient eager", eg.flatten().tolist())
print("       compiled", cg.flatten().tolist())
raise SystemExit(0 if torch.equal(ei, ci) and torch.equal(eg, cg) else 1)

"""Triage evidence, not counted as a bug (2026-11-23, CUDA): `a = x.double().pow(2).float(); -a + a` is nonzero compiled on CUDA (up to 1.9e-6 at 200,637 of 200,704 elements, H100, torch 2.11.0+cu130). The Triton kernel is `tmp3 = (tmp1 * tmp1).to(float32); tmp4 = -tmp3; tmp5 = tmp4 + tmp3`: the difference is the float32 rounding of the product, as if the compiler contracted the float64 product into the add across the cast (FMA contraction, Triton's default; not confirmed in the PTX); `emulate_precision_casts=True` gives 0, and float64 inputs give 0. Within allclose's float32 atol; the FMA class of the triage log. Exit 1 while it shows, 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
torch.manual_seed(0)
w = torch.randn(64, 32, 3, 3, 3, device="cuda") * 0.05
x = torch.randn(2, 32, 16, 7, 14, device="cuda")


def f(w, x):
    c = torch.conv3d(x, w, None, 1, 1)
    a = c.double().pow(2).to(torch.float32)
    return -a + a


e, g = f(w, x), torch.compile(f)(w, x)
print("torch", torch.__version__, "eager nonzero", int((e != 0).sum()), "compiled nonzero", int((g != 0).sum()),
      "max |compiled|", g.abs().max().item())
raise SystemExit(1 if bool((g != 0).any()) else 0)

"""Open candidate (CUDA corpus, conv_conv3d_video_block, session 4): a float32 tensor made by a float64 -> float32 cast, read twice in one fused kernel, gives two values: -a + a is nonzero compiled (up to 1.9e-6 at 200,637 of 200,704 elements on an H100, torch 2.11.0+cu130). Not yet triaged (fp contraction across the cast? a dropped cast on one read?). Exit 1 while it reproduces, 77 without a GPU."""
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

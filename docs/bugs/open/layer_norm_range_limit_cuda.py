"""Triage evidence, not a bug (2026-11-23, CUDA): the norm_layer_norm_bf16 candidate (int64 sweep, special set: a row of 256 holding +-9.2e18 twice each). Its sum of squared deviations, 4 x 8.5e37, is float32's max: float32 eager overflows to the bias like compiled, only bfloat16 eager survives; with three extremes (3/4 of the max) eager and compiled agree. Exit 1 if the three-extreme row differs (it did not on the H100, torch 2.11.0+cu130), 77 without a GPU."""
import torch

if not torch.cuda.is_available():
    print("needs a CUDA GPU")
    raise SystemExit(77)
g = torch.Generator().manual_seed(0)
base = torch.randint(-1000, 1000, (256,), generator=g).double()
rows = {}
for n in (3, 4):  # extremes: the sum of squared deviations is n x 8.5e37 (float32's max: 3.4e38)
    rows[n] = base.clone()
    rows[n][[82, 104, 45, 120][:n]] = torch.tensor([9.2234e18, 9.2234e18, -9.2234e18, -9.2234e18][:n], dtype=torch.float64)


def f(x):
    return torch.nn.functional.layer_norm(x, (256,))


print("torch", torch.__version__)
bad = False
for (n, row), dt in [(r, dt) for r in rows.items() for dt in (torch.float32, torch.bfloat16)]:
    x = row.to(dt).cuda().reshape(1, 256)
    eager, compiled = f(x), torch.compile(f)(x)
    torch._dynamo.reset()
    ref = f(row.reshape(1, 256))
    err = (compiled.double() - eager.double()).abs().max().item()
    print(f"{n} extremes, {str(dt)[6:]}: at 82 eager {eager[0, 82].item():.4g}, compiled {compiled[0, 82].item():.4g}, "
          f"fp64 {ref[0, 82].item():.4g}; max |compiled - eager| {err:.4g}")
    bad |= err > 0.1 and n == 3  # 3: the exact sum of squares is 3/4 of float32's max
raise SystemExit(1 if bad else 0)

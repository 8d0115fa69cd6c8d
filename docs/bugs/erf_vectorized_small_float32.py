"""Inductor, C++ on CPU: the vectorized float32 erf loses its relative accuracy near 0: erf(3.26e-8) is 0 compiled, 3.68e-8 eager and in fp64 (a tensor of at least one vector width takes the vectorized kernel; its approximation's error is absolute, not relative). Exit 1 while it reproduces."""
import torch

print("torch", torch.__version__)
x = torch.tensor([3.26e-8, -1e-7, 1e-6, 1e-4, 0.5] * 8)
e, c = torch.erf(x), torch.compile(torch.erf)(x)
for k in range(5):
    print(f"erf({x[k].item():.3g}): eager {e[k].item():.6g}  compiled {c[k].item():.6g}  fp64 {torch.erf(x[k].double()).item():.6g}")
raise SystemExit(0 if torch.allclose(e, c, rtol=1e-5, atol=0) else 1)

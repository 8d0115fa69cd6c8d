"""Eager CPU: the mean var_mean returns is NaN for a row holding one infinity among finite values, where torch.mean gives the infinity (eager's Welford update subtracts the running mean, -inf, from the next value, then adds +inf to -inf). A compiled program gives the infinity or NaN, by its kernel's order of the row (the hunt's program: -inf). Exit 1 while it reproduces (eager wrong)."""
import torch

print("torch", torch.__version__)
x = torch.tensor([0.5, -0.25, float("-inf"), 1.5, 2.0, -1.0, 0.75, 3.0])
for dt in (torch.float16, torch.float32):
    v, m = torch.var_mean(x.to(dt), 0)
    c = torch.compile(lambda t: torch.var_mean(t, 0))(x.to(dt))[1]
    print(f"{dt}: var_mean's mean eager {m.item()}, compiled {c.item()}; torch.mean {x.to(dt).mean().item()}")
v, m = torch.var_mean(x, 0)
raise SystemExit(1 if torch.isnan(m) and torch.isinf(x.mean()) else 0)

"""Open CUDA candidates of the 2026-11-23 corpus campaign, run 3 (docs/bugs.md, triage log): int16 amax under dynamic shapes, bfloat16 layer_norm on rows with inf/NaN. Run on a GPU host."""
import torch
torch.manual_seed(0)
print("torch", torch.__version__)
print("== int16 abs().amax(-1) and amax/amin over dims (0, 1), dynamic and static")
x = torch.randint(-32768, 32767, (7, 17, 64), dtype=torch.int16, device="cuda")
x[0, 0, 0] = -32768
for name, fn in [("abs.amax(-1)", lambda t: t.abs().amax(dim=-1)), ("amax(0,1)", lambda t: t.amax(dim=(0, 1))),
                 ("amin(0,1)", lambda t: t.amin(dim=(0, 1))), ("abs.amax.float/127", lambda t: t.abs().amax(dim=-1).clamp(min=1e-5) / 127.0)]:
    for dyn in (False, True):
        e = fn(x); c = torch.compile(fn, dynamic=dyn)(x)
        print(name, "dynamic" if dyn else "static", "eager", e.flatten()[:4].tolist(), "compiled", c.flatten()[:4].tolist(),
              "differ:", int((e != c).sum()))
        torch._dynamo.reset()
print("== bfloat16 layer_norm on rows holding inf / NaN / huge")
for spec in ("inf", "nan", "huge", "-inf"):
    y = torch.randn(4, 256, device="cuda")
    y[1, 5] = {"inf": float("inf"), "nan": float("nan"), "huge": 1e30, "-inf": -float("inf")}[spec]
    fn = lambda t: torch.nn.functional.layer_norm(t.bfloat16(), (256,), None, None, 1e-5)
    e = fn(y); c = torch.compile(fn)(y)
    print(spec, "row1 eager", e[1, :3].tolist(), "compiled", c[1, :3].tolist(), "nan-pos differ:", int((e.isnan() != c.isnan()).sum()))
    torch._dynamo.reset()

"""Open CUDA candidates of the 2026-11-23 corpus campaign (docs/bugs.md, triage log): bucketize/searchsorted with NaN, and a float64 hardswish model op by op. Run on a GPU host from the repo root."""
import sys, torch
torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
print("== bucketize / searchsorted with NaN, CUDA")
b = torch.linspace(-3.0, 3.0, 255, device="cuda")
x = torch.tensor([float("nan"), 0.5, float("inf"), -float("inf"), 4.0], device="cuda")
f = lambda x, b: torch.bucketize(x, b)
print("bucketize eager", f(x, b).tolist(), "compiled", torch.compile(f)(x, b).tolist())
g = torch.sort(torch.randn(4, 8, device="cuda"), -1).values
q = torch.tensor([[float("nan"), 0.0]] * 4, device="cuda")
h = lambda g, q: torch.searchsorted(g, q, right=True)
print("searchsorted eager", h(g, q).tolist(), "compiled", torch.compile(h)(g, q).tolist())
torch._dynamo.reset()
print("== hardswish model float64, CUDA")
sys.path.insert(0, "benchmarks/corpus")
import act_hardswish_hardsigmoid as m
torch.manual_seed(0)
model = m.Model(24, 6).double().eval().cuda()
xx = (torch.randn(8, 24, 28, 28) * 3).double().cuda()
with torch.no_grad():
    e = model(xx); c = torch.compile(model)(xx); r = model.cpu()(xx.cpu())
print("float64 max rel compiled-vs-eager", ((c - e).abs() / e.abs().clamp_min(1e-12)).max().item(),
      "eager-vs-cpu", ((e.cpu() - r).abs() / r.abs().clamp_min(1e-12)).max().item())
torch._dynamo.reset()
for name, fn in [("hardswish", torch.nn.functional.hardswish), ("hardsigmoid", torch.nn.functional.hardsigmoid),
                 ("relu6/6", lambda t: t * torch.nn.functional.relu6(t + 3.0) / 6.0),
                 ("conv1x1", torch.nn.Conv2d(24, 6, 1).double().cuda()), ("dwconv", torch.nn.Conv2d(24, 24, 3, padding=1, groups=24).double().cuda()),
                 ("avgpool", lambda t: torch.nn.functional.adaptive_avg_pool2d(t, 1))]:
    with torch.no_grad():
        e = fn(xx); c = torch.compile(fn)(xx)
    print(name, "float64 max abs", (c - e).abs().max().item(), "max rel", ((c - e).abs() / e.abs().clamp_min(1e-300)).max().item())
    torch._dynamo.reset()

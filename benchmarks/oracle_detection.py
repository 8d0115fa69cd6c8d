"""The oracle against planted faults: detection rate per fault backend, false alarms of `identity` and of real Inductor, side by side in one run; then the same faults through the whole tool.

    python benchmarks/oracle_detection.py [--seeds 5] [--dtype float32] [--judge FILE.py] [--no-cli] [--cli-only]
                                          [--cli-groups output,graph,identity]
    python benchmarks/oracle_detection.py --quick     # 1 seed in-process, 4 variants per CLI run (2 shared cores)
    python benchmarks/oracle_detection.py --calibrate [--seeds 200] [--dtype float32]

Ten small programs (row sums, matmul, softmax, layer_norm, argmax, topk, a GELU MLP with its
logits/probabilities/prediction, elementwise with tiny outputs, cumsum, and a program fed NaN/inf)
are compiled in-process with torch.compile, once per backend: every fault of
examples/backends/faulty_backends.py (each runs Dynamo's graph and corrupts its output one way) and
`inductor`. Each is run on SEEDS seeds x two input sets ("random-<seed>", "special-<seed>": NaN,
inf, subnormals, huge values in the activations; runners/oracle/inputs.py) and judged like a
worker does (runners/oracle/reference.py: eager twice, fp64, index sources, compute dtype).

Per backend it prints: runs, runs where the fault fired (changed the output), flagged (verdict
not ok), noted (ok, with a note: the strides fault should be noted, not flagged). Detection rate
= flagged / fired; false-alarm rate of identity and inductor = flagged / runs. `--judge FILE.py`
judges with another module's `judge_input_set(s, ref, got, fp64, ref2, idx)` (e.g. an older oracle).

Through the whole tool (benchmarks/detection_cli.py; skipped with --no-cli): `eqsat-test SEED --backend
FILE.py:FN` for the output faults of faulty_backends.py, the graph faults of
examples/backends/graph_faults.py (Inductor with a planted pass bug that the seeds' own inputs do not
trigger: special sets, dtype and size sweeps or rewrites must reach it) and the identity backend on
every seed of benchmarks/fault_seeds/: detection rates and identity's false-alarm rate. `--quick`: one
seed in-process and 4 variants per run through the tool (`--variants`), for a machine of 2 shared cores.

--calibrate: the measurement behind runners/oracle/numerics.py's constants. Nineteen programs
at calibration sizes (sums of 2**20, row sums that cancel, matmul, layer_norm with mean 100 x
std, conv2d, attention...), Inductor vs eager on SEEDS seeds of random inputs: per program, the
false alarms and the largest ratio |compiled - fp64| / bound over every element and seed (the
margin against rule 1's bound without the conditioning term S: below 1 passes).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from benchmarks.common import REPO, machine, table  # noqa: E402
from eqsat_test.runners.oracle.inputs import input_sets  # noqa: E402


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


# name -> (forward, base inputs, is_param, index_sources(*inputs) -> {path: (source, dim)})
def programs() -> dict:
    g = torch.Generator().manual_seed(1234)
    r = lambda *s, scale=1.0: torch.randn(*s, generator=g) * scale  # noqa: E731
    none = lambda *a: {}  # noqa: E731

    def mlp(x, w1, b1, w2):
        logits = F.gelu(x @ w1 + b1) @ w2
        return logits, logits.softmax(-1), logits.argmax(-1)

    def mlp_idx(x, w1, b1, w2):
        return {"[2]": (F.gelu(x @ w1 + b1) @ w2, -1)}

    def tiny(x):
        y = (x.exp() - 1) * torch.tanh(x)
        return y, y * 1e-5

    return {
        "row_sum": (lambda x: x.sum(-1), [r(64, 512)], [False], none),
        "matmul": (lambda x, w: x @ w, [r(64, 256), r(256, 128, scale=0.06)], [False, True], none),
        "softmax": (lambda x: x.softmax(-1), [r(32, 2048, scale=3.0)], [False], none),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (512,), w, b), [r(64, 512, scale=3.0) + 5, r(512), r(512)],
                       [False, True, True], none),
        "argmax": (lambda x: (x.amax(-1), x.argmax(-1)), [r(64, 300)], [False], lambda x: {"[1]": (x, -1)}),
        "topk": (lambda x: tuple(x.topk(5, -1)), [r(64, 300)], [False], lambda x: {"[1]": (x, -1)}),
        "mlp": (mlp, [r(32, 64), r(64, 128, scale=0.12), r(128), r(128, 16, scale=0.09)], [False, True, True, True],
                mlp_idx),
        "tiny_outputs": (tiny, [r(64, 256)], [False], none),
        "cumsum": (lambda x: x.cumsum(-1), [r(32, 1024)], [False], none),
        "edge_values": (lambda x: (x * 2 + 1, torch.relu(x), x.sum(-1), torch.where(x > 0, x, -x)),
                        [r(16, 64)], [False], none),
    }


def calibration_programs() -> dict:
    """name -> (forward, inputs(seed, dtype)): the calibration programs of numerics.py."""
    def mk(seed, shape, dtype, scale=1.0, shift=0.0):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(*shape, generator=g, dtype=torch.float64) * scale + shift).to(dtype)

    def centred(x):
        return x - x.mean(-1, keepdim=True)

    ln = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)  # noqa: E731
    return {
        "sum_2^20": (lambda x: x.sum(), lambda s, dt: (mk(s, (2**20,), dt),)),
        "row_sums_cancel": (lambda x: x.sum(-1), lambda s, dt: (centred(mk(s, (64, 2**14), dt)),)),
        "4_row_sums_cancel": (lambda x: x.sum(-1), lambda s, dt: (centred(mk(s, (4, 2**16), dt)),)),
        "row_sums": (lambda x: x.sum(-1), lambda s, dt: (mk(s, (256, 4096), dt),)),
        "4_row_sums": (lambda x: x.sum(-1), lambda s, dt: (mk(s, (4, 2**16), dt),)),
        "row_means": (lambda x: x.mean(-1), lambda s, dt: (mk(s, (256, 4096), dt, 1.0, 3.0),)),
        "matmul": (lambda a, b: a @ b, lambda s, dt: (mk(s, (128, 2048), dt), mk(s + 10**6, (2048, 128), dt))),
        "relu_matmul": (lambda a, b: torch.relu(a @ b), lambda s, dt: (mk(s, (128, 1024), dt), mk(s + 7, (1024, 256), dt))),
        "layer_norm": (ln, lambda s, dt: (mk(s, (128, 1024), dt, 3.0, 5.0), mk(s + 1, (1024,), dt), mk(s + 2, (1024,), dt))),
        "layer_norm_mean100": (ln, lambda s, dt: (mk(s, (128, 1024), dt, 1.0, 100.0), mk(s + 1, (1024,), dt),
                                                  mk(s + 2, (1024,), dt))),
        "softmax": (lambda x: x.softmax(-1), lambda s, dt: (mk(s, (64, 4096), dt, 3.0),)),
        "log_softmax": (lambda x: x.log_softmax(-1), lambda s, dt: (mk(s, (64, 4096), dt, 3.0),)),
        "var": (lambda x: x.var(-1), lambda s, dt: (mk(s, (128, 2048), dt, 2.0, 10.0),)),
        "cumsum": (lambda x: x.cumsum(-1), lambda s, dt: (mk(s, (64, 4096), dt),)),
        "rmsnorm": (lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
                    lambda s, dt: (mk(s, (128, 1024), dt), mk(s + 1, (1024,), dt))),
        "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), lambda s, dt: (mk(s, (4, 16, 32, 32), dt),
                                                                          mk(s + 3, (32, 16, 3, 3), dt, 0.1))),
        "attention": (F.scaled_dot_product_attention, lambda s, dt: tuple(mk(s + i, (2, 4, 128, 64), dt) for i in range(3))),
        "gelu_mlp_softmax": (lambda x, w1, b1, w2: (F.gelu(x @ w1 + b1) @ w2).softmax(-1),
                             lambda s, dt: (mk(s, (64, 256), dt), mk(s + 1, (256, 512), dt, 0.06), mk(s + 2, (512,), dt),
                                            mk(s + 3, (512, 64), dt, 0.05))),
        "gelu_tanh_exp": (lambda x: F.gelu(x, approximate="tanh") * torch.tanh(x) + torch.exp(-x * x),
                          lambda s, dt: (mk(s, (256, 1024), dt, 2.0),)),
    }


def calibrate(seeds: int, dtype: torch.dtype) -> None:
    from eqsat_test.runners.oracle import judge as J
    from eqsat_test.runners.oracle import numerics as nx
    rows, t_start = [], time.perf_counter()
    for name, (fwd, make) in calibration_programs().items():
        torch._dynamo.reset()
        compiled = torch.compile(fwd, backend="inductor", dynamic=False)
        fails, margin, first = 0, 0.0, ""
        for seed in range(seeds):
            args = make(seed, dtype)
            with torch.no_grad():
                e, c, f = fwd(*args), compiled(*args), fwd(*[a.double() for a in args])
            v = J.judge(e, c, f)
            fails += not v.ok
            first = first or ("" if v.ok else v.detail[:110])
            e, c, f = e.double(), c.double(), f.double()
            reference = not (dtype == torch.float64 and bool(nx.equal_nan(e, f).all()))
            ref = f if reference else e
            fin = torch.isfinite(e) & torch.isfinite(ref) & torch.isfinite(c)
            f0 = torch.where(fin, ref, torch.zeros_like(ref))
            # rule 1's bound as the judge builds it (float_rules.py), without the conditioning term S
            b = nx.bound(torch.where(fin, e, f0), f0, fin & ~((e == 0) & (ref == 0)), nx.tol_dtype(dtype, None),
                         reference)
            r = torch.where(fin, (c - ref).abs() / b.bound, torch.zeros_like(e))
            margin = max(margin, float(r.nan_to_num(0.0, posinf=1e30).max()))
        rows.append([name, f"{fails}/{seeds}", f"{margin:.3g}", first])
        print(f"  {name}: done ({time.perf_counter() - t_start:.0f}s)", file=sys.stderr, flush=True)
    print(f"machine: {machine()}; Inductor vs eager, {str(dtype)[6:]}, {seeds} seeds; {time.perf_counter() - t_start:.0f}s")
    print(table(rows, ["program", "false alarms", "max |c - f| / bound", "first false alarm"]))


def run(seeds: int, dtype: torch.dtype, judge_file: str | None, verbose: bool = False) -> None:
    fb = _load(REPO / "examples" / "backends" / "faulty_backends.py", "faulty_backends")
    from eqsat_test.runners.oracle.reference import eager_reference, judge_against
    if judge_file:
        other = _load(Path(judge_file), "other_judge").judge_input_set
        verdict = lambda r, got: other(r.set, r.ref, got, r.fp64, r.ref2, r.idx)  # noqa: E731
    else:
        verdict = judge_against  # as the worker judges
    backends = dict(fb.FAULTS)
    backends["inductor"] = "inductor"
    progs = programs()
    stats = {b: {"runs": 0, "fired": 0, "flagged": 0, "noted": 0, "flagged_fired": 0} for b in backends}
    examples: dict[str, list[str]] = {}
    t_start = time.perf_counter()
    for pname, (fwd, base, is_param, idx_fn) in progs.items():
        base = [t.to(dtype) for t in base]
        for bname, backend in backends.items():
            torch._dynamo.reset()
            compiled = torch.compile(fwd, backend=backend, dynamic=False)
            for seed in range(seeds):
                for s in input_sets(base, is_param=is_param, seed=seed, kinds=("random", "special")):
                    r = eager_reference(fwd, idx_fn, s)  # eager twice, fp64, compute dtype: as the worker
                    with torch.no_grad():
                        fb.FIRED.clear()
                        got = compiled(*s.inputs)
                    fired = bool(fb.FIRED and any(fb.FIRED)) if bname != "inductor" else False
                    v = verdict(r, got)
                    st = stats[bname]
                    st["runs"] += 1
                    st["fired"] += fired
                    flagged = not v.ok
                    st["flagged"] += flagged
                    st["flagged_fired"] += flagged and fired
                    st["noted"] += v.ok and "note:" in v.detail and fired
                    missed = fired and not flagged and bname not in ("identity", "transposed_stride")
                    alarm = flagged and bname in ("identity", "inductor")
                    if missed or alarm:
                        examples.setdefault(bname, []).append(f"{pname} {s.name}: {v.kind}: {v.detail[:300]}")
        print(f"  {pname}: done ({time.perf_counter() - t_start:.0f}s)", file=sys.stderr, flush=True)

    rows = []
    for bname, st in stats.items():
        if bname in ("identity", "inductor"):
            rate = f"false alarms {st['flagged']}/{st['runs']} = {100 * st['flagged'] / max(st['runs'], 1):.1f}%"
        elif bname == "transposed_stride":
            rate = f"noted {st['noted']}/{st['fired']}, flagged {st['flagged_fired']}/{st['fired']}"
        else:
            rate = f"detected {st['flagged_fired']}/{st['fired']} = {100 * st['flagged_fired'] / max(st['fired'], 1):.1f}%"
        rows.append([bname, st["runs"], st["fired"] if bname != "inductor" else "-", st["flagged"], rate])
    print(f"machine: {machine()}; {len(progs)} programs x {seeds} seeds x 2 input sets (random, special), "
          f"{str(dtype)[6:]}; judge: {judge_file or 'eqsat_test/runners/oracle/judge.py'}; "
          f"{time.perf_counter() - t_start:.0f}s")
    print(table(rows, ["backend", "runs", "fired", "flagged", "rate"]))
    for bname, texts in examples.items():
        what = "miss" if bname not in ("identity", "inductor") else "false alarm"
        for text in texts if verbose else texts[:1]:
            print(f"{what} of {bname}: {text}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--dtype", default="float32", help="float32 | bfloat16 | float16 (the programs' inputs)")
    ap.add_argument("--judge", default=None, help="FILE.py with judge_input_set(s, ref, got, fp64, ref2, idx)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("-v", "--verbose", action="store_true", help="every miss and false alarm, not the first")
    ap.add_argument("--calibrate", action="store_true", help="Inductor's margins on the calibration programs")
    ap.add_argument("--no-cli", action="store_true", help="skip the runs through the whole tool")
    ap.add_argument("--cli-only", action="store_true", help="only the runs through the whole tool")
    ap.add_argument("--cli-groups", default="output,graph,identity",
                    help="which runs through the whole tool: output faults, graph faults, identity on every seed")
    ap.add_argument("--jobs", type=int, default=2, help="eqsat-test worker processes per CLI run")
    ap.add_argument("--variants", type=int, default=8, help="variants per CLI run")
    ap.add_argument("--quick", action="store_true", help="--seeds 1 --variants 4 (2 shared cores)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.quick:
        a.seeds, a.variants = 1, 4
    if a.calibrate:
        calibrate(a.seeds, getattr(torch, a.dtype))
        return
    if not a.cli_only:
        run(a.seeds, getattr(torch, a.dtype), a.judge, a.verbose)
    if not a.no_cli:
        from benchmarks.detection_cli import CLI_GROUPS, run_cli  # the whole tool: one eqsat-test run per backend, seed
        only = tuple(g for g in a.cli_groups.split(",") if g)
        if not set(only) <= set(CLI_GROUPS):
            ap.error(f"--cli-groups: each one of {', '.join(CLI_GROUPS)}")
        run_cli(jobs=a.jobs, verbose=a.verbose, variants=a.variants, only=only)


if __name__ == "__main__":
    main()

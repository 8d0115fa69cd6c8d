"""What the dtype/size sweeps cost: the same bundle executed without and with sweeps, side by side in one run.

    python benchmarks/sweep_cost.py [MODEL.py ...] [-n 8] [--jobs 2] [--rules NAME|PATH]

For each model (default: every examples/*.py) one bundle is generated, then executed twice by the
real pipeline (runners/pipeline.execute_bundle, warm worker subprocesses, Inductor on CPU): once
with `sweep=None` and once with the default sweeps (what `eqsat-test MODEL.py` does). Each run
gets a fresh Inductor cache, so neither profits from the other's compiled kernels. Printed per
model: wall seconds and CPU seconds (this process's workers and their compilers) of both runs
and their ratios; the seed's sweep task and the mean variant sweep task in seconds; swept input
sets judged and compiles spent. On a shared machine prefer the CPU ratio: wall time there
measures the neighbours too.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _cpu_children() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_once(bundle: Path, out: Path, sweep: dict | None, jobs: int, cache: Path) -> dict:
    from eqsat_test.runners.pipeline import ExecOptions, execute_bundle

    opts = ExecOptions(jobs=jobs, minimize=False, collect_env=False, progress=False, sweep=sweep,
                       env={"TORCHINDUCTOR_CACHE_DIR": str(cache)})
    c0, t0 = _cpu_children(), time.perf_counter()
    report = execute_bundle(bundle, out, opts)
    wall, cpu = time.perf_counter() - t0, _cpu_children() - c0
    raw = json.loads((out / "results.json").read_text())["raw"]
    sweeps = [r for r in raw if str(r.get("task", "")).endswith("#sweep")]
    seed = [r.get("elapsed", 0.0) for r in sweeps if r["variant"].endswith("_seed")]
    var = [r.get("elapsed", 0.0) for r in sweeps if not r["variant"].endswith("_seed")]
    base = [r.get("elapsed", 0.0) for r in raw if r not in sweeps]
    st = report["stats"].get("sweep") or {}
    return {"wall": wall, "cpu": cpu, "tasks": len(raw), "findings": len([f for f in report["findings"] if f.get("repro")]),
            "base_task_mean": sum(base) / max(1, len(base)), "seed_sweep": sum(seed),
            "variant_sweep_mean": sum(var) / max(1, len(var)), "judged": st.get("judged", 0),
            "compiles": st.get("compiles", 0), "variants": report["variants"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("-n", "--variants", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rules", action="append", default=[])
    ap.add_argument("--out", type=Path, default=None, help="keep the bundles and both runs' results here")
    args = ap.parse_args()
    models = args.models or sorted((REPO / "examples").glob("*.py"))

    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from eqsat_test.runners.checks.sweep_plan import SweepConfig

    sweep = SweepConfig(seconds=150.0).to_dict()  # what the CLI passes at its default --timeout 300
    print(f"sweeps: default SweepConfig (seed: every point; variants: {sweep['points']} points; dynamic: "
          f"{sweep['dynamic']}), jobs={args.jobs}, cpus={os.cpu_count()}, load={os.getloadavg()[0]:.1f}")
    head = (f"{'model':<14}{'vars':>5} {'wall off':>9}{'wall on':>9}{'ratio':>7} {'cpu off':>8}{'cpu on':>8}"
            f"{'ratio':>7} {'base task':>10}{'seed sweep':>11}{'var sweep':>10}{'judged':>8}{'compiles':>9}{'bugs off/on':>12}")
    print(head)
    with tempfile.TemporaryDirectory(prefix="sweep_cost_") as tmp:
        tmp = args.out or Path(tmp)
        for m in models:
            bundle = tmp / m.stem / "bundle"
            generate(m, bundle, GenerateOptions(variants=args.variants, rules=tuple(args.rules), seed=0))
            off = run_once(bundle, tmp / m.stem / "off", None, args.jobs, tmp / m.stem / "cache_off")
            on = run_once(bundle, tmp / m.stem / "on", sweep, args.jobs, tmp / m.stem / "cache_on")
            print(f"{m.stem:<14}{on['variants']:>5} {off['wall']:>9.1f}{on['wall']:>9.1f}{on['wall'] / off['wall']:>6.2f}x "
                  f"{off['cpu']:>8.1f}{on['cpu']:>8.1f}{on['cpu'] / max(off['cpu'], 1e-9):>6.2f}x "
                  f"{off['base_task_mean']:>9.2f}s{on['seed_sweep']:>10.1f}s{on['variant_sweep_mean']:>9.2f}s"
                  f"{on['judged']:>8}{on['compiles']:>9}{off['findings']:>8}/{on['findings']}", flush=True)
    print(f"(load average at the end: {os.getloadavg()[0]:.1f}; base task = mean seconds of one variant's "
          f"ordinary task, sweeps off)")


if __name__ == "__main__":
    main()

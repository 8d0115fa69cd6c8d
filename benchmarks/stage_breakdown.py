"""Per-variant stage breakdown on a small, a medium and a large model, and our overhead as a % of compile+run.

    python benchmarks/stage_breakdown.py [--models small,medium,large] [--variants 32] [--rules SPEC]
        [--jobs 1] [--batch 1]

Generation runs in this process (`rewrite.generate.generate`, its own stage timings); execution is
the real `execute_bundle` (warm workers; no sweeps, minimization or debug artifacts, so the
compile and run times are those of checking the variants). Per variant: generation stages are the
model's totals divided by its variants; compile and run are the medians over its variant tasks
(the seed and each worker's first task, which pays the process's one-time Inductor warm-up, are
left out of the median and shown apart). Overhead = lift + saturate + extract + render.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import MODELS, machine, table  # noqa: E402
from benchmarks.throughput import MODEL_FILES  # noqa: E402

GEN_STAGES = ("load", "capture", "lift", "saturate", "extract", "render")
OURS = ("lift", "saturate", "extract", "render")


def breakdown(model: Path, n: int, rules: list[str], out: Path, jobs: int, batch: int) -> dict:
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from eqsat_test.runners.pipeline import ExecOptions, execute_bundle

    m = generate(model, out / "bundle", GenerateOptions(variants=n, rules=tuple(rules)))
    nv = m.rewritten_count
    rep = execute_bundle(out / "bundle", out, ExecOptions(jobs=jobs, minimize=False, collect_env=False,
                                                          progress=False, batch=batch))
    raw = json.loads((out / "results.json").read_text())["raw"]
    seeds = m.seed_ids
    firsts = {r["task"] for r in raw[:jobs]}  # each worker's first task (workers take tasks in order)
    var = [r for r in raw if r["variant"] not in seeds and r["task"] not in firsts and r.get("timings")]
    med = {k: statistics.median([r["timings"].get(k, 0.0) for r in var]) if var else 0.0
           for k in ("load", "eager", "compile", "run")}
    first = [r for r in raw if r["task"] in firsts]
    t = m.timings
    per = {k: t.get(k, 0.0) / max(1, nv) for k in GEN_STAGES}
    ours = sum(per[k] for k in OURS)
    cr = med["compile"] + med["run"]
    return {"ops": sum(g.ops for g in m.graphs), "variants": nv, "per": per, "med": med, "ours": ours,
            "compile_run": cr, "pct": 100.0 * ours / cr if cr else float("nan"),
            "first_compile": first[0]["timings"].get("compile") if first and first[0].get("timings") else None,
            "rules_s": t.get("rules", 0.0), "sat": [g.saturation for g in m.graphs],
            "exec_wall": rep["stats"]["wall_seconds"], "batch": rep["stats"].get("batch")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="small,medium,large")
    ap.add_argument("--variants", type=int, default=32)
    ap.add_argument("--rules", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="eqsat-stages-"))
    print(f"machine: {machine()}")
    rows, summary = [], []
    for name in args.models.split(","):
        model = MODELS / MODEL_FILES.get(name, name)
        b = breakdown(model, args.variants, args.rules, out / name, args.jobs, args.batch)
        p, md = b["per"], b["med"]
        rows.append([name, b["ops"], b["variants"]] + [f"{p[k]:.3f}" for k in GEN_STAGES] +
                    [f"{md['compile']:.3f}", f"{md['run']:.3f}", f"{b['ours']:.3f}", f"{b['compile_run']:.3f}",
                     f"{b['pct']:.1f}%"])
        summary.append(f"{name}: rule loading {b['rules_s']:.2f} s per run (cached compiled rules), first task's "
                       f"compile {b['first_compile'] or 0:.1f} s (worker warm-up), execution wall {b['exec_wall']:.1f} s, "
                       f"saturation {b['sat']}, batch {b['batch']}")
        print(table(rows[-1:], HEADER), flush=True)
    print()
    print("seconds per variant (generation: model total / variants; compile, run: median per variant task)")
    print(table(rows, HEADER))
    print("\n".join(summary))


HEADER = ["model", "ops", "variants", "load", "capture", "lift", "saturate", "extract", "render", "compile",
          "run", "ours", "compile+run", "ours/(compile+run)"]

if __name__ == "__main__":
    main()

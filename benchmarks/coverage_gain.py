"""Compiler lines reached by seeds, and what variants and the seeds' sweeps add, over a list of models (`--coverage` runs).

Each model gets one `eqsat-test MODEL --coverage` run (Inductor's caches off; the lines of
torch/_inductor, _functorch, _decomp and _refs each task reaches, after the worker's warm-up compile).
Printed per model: the lines the seed reaches, the lines its variants add, the lines its dtype/size/
dynamic sweeps add; then per pass-file group (fx_passes, lowering, ir, scheduler, codegen,
decompositions, ...) the gains summed over models, and over the union of all models' lines.

    python benchmarks/coverage_gain.py                      # a corpus sample, 2 cores: ~30-60 min
    python benchmarks/coverage_gain.py benchmarks/corpus/*.py --jobs 8 --variants 16   # the corpus (GPU host)
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import REPO, machine, table  # noqa: E402
from eqsat_test.runners.checks.line_gain import GROUP_NAMES, as_set, group_of  # noqa: E402
from eqsat_test.runners.exec.compiler_lines import read_lines  # noqa: E402

SAMPLE = ["examples/elementwise.py", "benchmarks/corpus/act_softmax.py", "benchmarks/corpus/matmul_linear.py",
          "benchmarks/corpus/norm_layer_norm.py", "benchmarks/corpus/reduce_cumsum.py",
          "benchmarks/corpus/transformer_mha_manual.py"]


def run_model(model: str, out: Path, args: list[str]) -> dict:
    """One `eqsat-test MODEL --out OUT ...` run: its report, exit code and wall seconds."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "run", model, "--out", str(out), "--json", *args],
                       cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - t0
    try:
        report = json.loads(p.stdout)
    except ValueError:
        report = {}
    return {"model": model, "exit": p.returncode, "wall": wall, "report": report, "out": out,
            "stderr": p.stderr[-2000:]}


def line_sets(out: Path) -> dict[str, set]:
    """The run's lines by kind of task: "seed", "variants", "seed_sweeps", "variant_sweeps"."""
    res = json.loads((out / "results.json").read_text())
    seeds = {v for v in {r.get("variant") for r in res["raw"]} if str(v).endswith("_seed")}
    got: dict[str, set] = {"seed": set(), "variants": set(), "seed_sweeps": set(), "variant_sweeps": set()}
    for r in res["raw"]:
        info = r.get("compiler_lines")
        if not info:
            continue
        sweep = bool(r.get("sweep_task")) or str(r.get("task", "")).endswith("#sweep")
        kind = ("seed" if r.get("variant") in seeds else "variant") + ("_sweeps" if sweep else "")
        got["variants" if kind == "variant" else kind] |= as_set(read_lines(info["file"]))
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=SAMPLE)
    ap.add_argument("--variants", "-n", type=int, default=16)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/eqsat-coverage-gain"))
    ap.add_argument("--extra", default="", help="more eqsat-test options, space-separated (e.g. '--no-sweep')")
    a = ap.parse_args()
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d')}; eqsat-test run -n {a.variants} -j {a.jobs} "
          f"--coverage {a.extra}".rstrip())
    rows, union = [], {k: set() for k in ("seed", "variants", "seed_sweeps")}
    var_groups, sweep_groups, var_files = Counter(), Counter(), Counter()
    for m in a.models:
        r = run_model(m, a.out / Path(m).stem, ["-n", str(a.variants), "-j", str(a.jobs), "--coverage",
                                                 "--no-artifacts", *a.extra.split()])
        if not (a.out / Path(m).stem / "results.json").is_file():
            rows.append([Path(m).stem, "-", "-", "-", "-", f"exit {r['exit']}", f"{r['wall']:.0f}"])
            print(f"  {m}: no results (exit {r['exit']}): {r['stderr'][-300:]}", file=sys.stderr)
            continue
        s = line_sets(a.out / Path(m).stem)
        seed = s["seed"]
        vnew, snew = s["variants"] - seed, s["seed_sweeps"] - seed
        var_groups.update(group_of(f) for f, _ in vnew)
        sweep_groups.update(group_of(f) for f, _ in snew)
        var_files.update(f for f, _ in vnew)
        for k in union:
            union[k] |= s[k]
        n = max(1, len(seed))
        stats = r["report"].get("stats", {})
        rows.append([Path(m).stem, f"{len(seed):,}", f"{len(vnew):,} (+{100 * len(vnew) / n:.0f}%)",
                     f"{len(snew):,} (+{100 * len(snew) / n:.0f}%)", r["report"].get("variants", "-"),
                     stats.get("compiler_bugs", "-"), f"{r['wall']:.0f}"])
    print(table(rows, ["model", "seed lines", "variants add", "seed sweeps add", "variants", "candidates", "wall s"]))
    tot_seed = sum(int(r[1].replace(",", "")) for r in rows if r[1] != "-")
    tot_var = sum(int(r[2].split()[0].replace(",", "")) for r in rows if r[2] != "-")
    tot_sweep = sum(int(r[3].split()[0].replace(",", "")) for r in rows if r[3] != "-")
    if tot_seed:
        print(f"\nsum over models: seeds {tot_seed:,} lines; variants add {tot_var:,} (+{100 * tot_var / tot_seed:.1f}%); "
              f"seed sweeps add {tot_sweep:,} (+{100 * tot_sweep / tot_seed:.1f}%)")
        u_seed = union["seed"]
        u_var, u_sweep = union["variants"] - u_seed, union["seed_sweeps"] - u_seed
        print(f"union over models: seeds {len(u_seed):,} lines; variants add {len(u_var):,} "
              f"(+{100 * len(u_var) / max(1, len(u_seed)):.1f}%); seed sweeps add {len(u_sweep):,} "
              f"(+{100 * len(u_sweep) / max(1, len(u_seed)):.1f}%); variants beyond seeds and sweeps "
              f"{len(union['variants'] - u_seed - union['seed_sweeps']):,}")
    print("\ngain per pass-file group (summed over models): group, variants add, seed sweeps add")
    print(table([[g, var_groups.get(g, 0), sweep_groups.get(g, 0)] for g in GROUP_NAMES + ("other",)
                 if var_groups.get(g) or sweep_groups.get(g)], ["group", "variants", "seed sweeps"]))
    print("\nfiles where variants add most (summed over models):")
    print(table([[f, n] for f, n in var_files.most_common(12)], ["file", "lines"]))


if __name__ == "__main__":
    main()

"""Coverage-guided extraction against uniform, near-original and the mixed default, side by side: same models, seed and variant budget.

Each model is run once per extraction mode (`--mode uniform`, `--mode near-original`, both
alternating (the mixed default), `--mode guided`), every run with `--coverage` (so that each is
measured the same way), no sweeps (the extraction alone), a saturation bounded by iterations only
(the same e-graph whatever the load). Printed per model and mode: the compiler lines the run reached
(seed and variants), the lines its variants added beyond the seed, compiler-bug candidates (each
confirmed alone), wall seconds; then totals and the ratios against uniform and the mixed default.
Mode `plain` is the mixed default as a user runs it, without `--coverage` (guided needs coverage, which
turns Inductor's caches off and compiles one variant at a time): its wall time is the cost baseline.

    python benchmarks/guided_extraction.py                        # a corpus sample + two int-softmax seeds
    python benchmarks/guided_extraction.py --every 13 --modes uniform,mixed,guided   # every 13th corpus file
    python benchmarks/guided_extraction.py benchmarks/corpus/*.py --jobs 8   # the corpus (GPU host)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import machine, table  # noqa: E402
from benchmarks.coverage_gain import line_sets, run_model  # noqa: E402

SAMPLE = ["benchmarks/corpus/act_softmax.py", "benchmarks/corpus/matmul_linear.py",
          "benchmarks/corpus/norm_layer_norm.py", "benchmarks/corpus/reduce_cumsum.py",
          "benchmarks/corpus/transformer_mha_manual.py", "examples/elementwise.py",
          "tests/models/int_softmax_cast_first.py", "tests/models/int_softmax_max_values.py"]
MODES = {"uniform": ["--mode", "uniform"], "near-original": ["--mode", "near-original"],
         "mixed": [], "guided": ["--mode", "guided"],
         "plain": []}  # the mixed default as a user runs it, without --coverage: its wall time only


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=SAMPLE)
    ap.add_argument("--every", type=int, default=0,
                    help="instead of MODELS: every K-th file of benchmarks/corpus (sorted, from the first)")
    ap.add_argument("--variants", "-n", type=int, default=16)
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--modes", default="uniform,near-original,mixed,guided", help=f"of {', '.join(MODES)}")
    ap.add_argument("--out", type=Path, default=Path("/tmp/eqsat-guided"))
    ap.add_argument("--extra", default="", help="more eqsat-test options, space-separated")
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    if a.every > 0:
        corpus = sorted((Path(__file__).resolve().parent / "corpus").glob("*.py"))
        a.models = [str(p) for p in corpus[::a.every]]
    common = ["-n", str(a.variants), "-j", str(a.jobs), "--coverage", "--no-sweep", "--no-artifacts",
              "--iterations", "6", "--sat-seconds", "600", "--seed", "0", *a.extra.split()]
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d')}; eqsat-test run {' '.join(common)}")
    rows, tot = [], {m: {"lines": 0, "gain": 0, "bugs": 0, "causes": 0, "wall": 0.0, "models_with_bugs": 0}
                     for m in modes}
    for model in a.models:
        for mode in modes:
            out = a.out / Path(model).stem / mode
            args = [x for x in common if x != "--coverage"] if mode == "plain" else common
            r = run_model(model, out, args + MODES[mode])
            if not (out / "results.json").is_file():
                rows.append([Path(model).stem, mode, "-", "-", f"exit {r['exit']}", "-", f"{r['wall']:.0f}"])
                print(f"  {model} {mode}: no results (exit {r['exit']}): {r['stderr'][-300:]}", file=sys.stderr)
                continue
            s = line_sets(out) if mode != "plain" else {"seed": set(), "variants": set()}
            lines, gain = len(s["seed"] | s["variants"]), len(s["variants"] - s["seed"])
            st = r["report"].get("stats") or {}
            bugs, causes = st.get("compiler_bugs", 0) or 0, st.get("root_causes", 0) or 0
            t = tot[mode]
            t["lines"] += lines
            t["gain"] += gain
            t["bugs"] += bugs
            t["causes"] += causes
            t["models_with_bugs"] += bool(bugs)
            t["wall"] += r["wall"]
            rows.append([Path(model).stem, mode, f"{lines:,}", f"{gain:,}", bugs, causes, f"{r['wall']:.0f}"])
            print("  " + " | ".join(str(c) for c in rows[-1]), file=sys.stderr, flush=True)
    print(table(rows, ["model", "mode", "lines reached", "variants add", "candidates", "root causes", "wall s"]))
    print()
    base = {k: tot.get(k) for k in ("uniform", "mixed")}
    out_rows = []
    for m in modes:
        t = tot[m]
        ratio = lambda b, t=t: f"{t['gain'] / max(1, b['gain']):.2f}x" if b else "-"  # noqa: E731
        out_rows.append([m, f"{t['lines']:,}", f"{t['gain']:,}", ratio(base["uniform"]), ratio(base["mixed"]),
                         f"{t['bugs']} ({t['models_with_bugs']} models)", t["causes"], f"{t['wall']:.0f}"])
    print(table(out_rows, ["mode", "lines reached (sum)", "variants add (sum)", "gain vs uniform",
                           "gain vs mixed", "candidates", "root causes", "wall s"]))


if __name__ == "__main__":
    main()

"""The oracle's clearing rules on a corpus sample: per rule, how many elements it cleared (the runs' own counts, results.json stats.oracle_rules) and the real-bug test it must not clear.

    python benchmarks/oracle_exemptions.py                  # every 12th corpus file, 4 variants, sweeps of the seed only
    python benchmarks/oracle_exemptions.py --every 4 -n 8   # a larger sample
    python benchmarks/oracle_exemptions.py MODEL.py ...     # given models

Each model runs through the whole tool, its default settings made small for a machine of 2 shared
cores: `-n 4` variants, 2 sweep points per variant (`--sweep-points 2`), no minimizing and no
artifacts (the verdicts are what is counted), `--seed 0`. Every verdict carries its rules' counts per
leaf (runners/oracle/verdict.py: RuleCount); a run totals them in results.json (report.stats.oracle_rules),
and this script sums the runs' totals, not recounting anything. Printed: per clearing rule of the oracle's
table (runners/oracle/rules.py) its elements cleared, the models it fired in, the model where it cleared
most, and its real-bug test (tests/unit/runners/oracle/test_real_bugs.py); then the convicting and noting
rules' counts, and per model the candidates and notes of its run. A rule that clears much on a sample
is the one to read first: docs/oracle.md says what each clears and why.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import REPO, machine, table  # noqa: E402
from eqsat_test.runners.oracle import rules  # noqa: E402

SMALL = ["-n", "4", "--sweep-points", "2", "--no-minimize", "--no-artifacts", "--seed", "0"]


def run_model(model: str, out: Path, jobs: int, extra: list[str]) -> dict:
    """One eqsat-test run: its exit, wall seconds and results.json report ({} where there is none)."""
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "run", model, "--out", str(out), "-j",
                        str(jobs), *SMALL, *extra], cwd=REPO, capture_output=True, text=True)
    res = out / "results.json"
    report = json.loads(res.read_text()).get("report", {}) if res.is_file() else {}
    return {"exit": p.returncode, "wall": time.monotonic() - t0, "report": report, "stderr": p.stderr}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--every", type=int, default=12, help="without MODELS: every K-th file of benchmarks/corpus")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("/tmp/eqsat-oracle-exemptions"))
    ap.add_argument("--extra", default="", help="more eqsat-test options, space-separated (after the small ones)")
    a = ap.parse_args()
    models = a.models or [str(p) for p in sorted((REPO / "benchmarks" / "corpus").glob("*.py"))[::a.every]]
    extra = a.extra.split()
    t_start = time.monotonic()
    totals: dict[str, int] = {}
    where: dict[str, dict[str, int]] = {}  # rule -> model -> elements
    per_model = []
    for model in models:
        name = Path(model).stem
        r = run_model(model, a.out / name, a.jobs, extra)
        st = r["report"].get("stats") or {}
        counts = st.get("oracle_rules") or {}
        for rule, n in counts.items():
            totals[rule] = totals.get(rule, 0) + int(n)
            where.setdefault(rule, {})[name] = int(n)
        per_model.append([name, r["exit"], st.get("compiler_bugs", "-"), st.get("notes", "-"),
                          sum(int(n) for k, n in counts.items() if k in rules.BY_ID and rules.BY_ID[k].effect == rules.CLEARS),
                          f"{r['wall']:.0f}"])
        if not r["report"]:
            print(f"  {model}: no results (exit {r['exit']}): {r['stderr'][-300:]}", file=sys.stderr)
        print("  " + " | ".join(str(c) for c in per_model[-1]), file=sys.stderr, flush=True)

    def top(rule: str) -> str:
        by = where.get(rule) or {}
        if not by:
            return "-"
        m = max(by, key=lambda k: by[k])
        return f"{m} ({by[m]:,})"
    clearing = sorted((r for r in rules.RULES if r.effect == rules.CLEARS), key=lambda r: -totals.get(r.id, 0))
    rows = [[f"`{r.id}`", f"{totals.get(r.id, 0):,}", len(where.get(r.id) or {}), top(r.id),
             getattr(r, "must_not_clear", "").split("::")[-1]] for r in clearing]  # (an older table: none)
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d')}; {len(models)} models "
          f"({'given' if a.models else f'every {a.every}th of benchmarks/corpus'}); eqsat-test run {' '.join(SMALL + extra)} "
          f"-j {a.jobs}; {time.monotonic() - t_start:.0f}s")
    print(table(rows, ["clearing rule", "elements cleared", "models", "most in", "the real bug it must not clear"]))
    print()
    others = [[f"`{r.id}`", r.effect, f"{totals.get(r.id, 0):,}", len(where.get(r.id) or {}), top(r.id)]
              for r in rules.RULES if r.effect != rules.CLEARS]
    print(table(others, ["rule", "effect", "elements", "models", "most in"]))
    print()
    print(table(per_model, ["model", "exit", "candidates", "notes", "elements cleared", "wall s"]))


if __name__ == "__main__":
    main()

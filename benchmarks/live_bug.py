"""A tiny model with one live bug, default run: when the first verdict lands, how long the whole run takes, and that the repro is written, confirmed and proven; this checkout and an older one side by side, in one run.

    python benchmarks/live_bug.py [--model benchmarks/models/live_bug_expm1.py] [--base DIR] [--repeat N] [-- OPTIONS]

The model (benchmarks/models/live_bug_expm1.py: three ops, ledger #6 on CPU) runs with eqsat-test's defaults
(`eqsat-test MODEL`, plus OPTIONS) from this checkout and, with --base, from another one (an older worktree:
`git worktree add --detach DIR COMMIT`), the arms interleaved (older, this, older, this ...) so that load from
other work falls on both. Per run: exit code, wall and CPU seconds (the whole process tree), the first verdict
from the command's start and from execution's start (OUT/verdicts.jsonl), the stages (runners/cli/runlines.py's
stage line: tasks, confirm, minimize, prove, and artifacts where a run collected them before its summary), the
root causes, and whether each root cause's repro.py was confirmed (and, where the run proves them, proven in a
fresh process). Then older/this for wall, CPU and the first verdict.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.cli_run import REPO, bug_findings, checkout_label, run_cli, stages  # noqa: E402
from benchmarks.common import machine, table  # noqa: E402

GOAL_FIRST, GOAL_WHOLE = 10.0, 45.0


def one(model: Path, checkout: Path, out: Path, extra: list[str]) -> dict:
    r = run_cli([str(model), *extra], out, checkout)
    rep = r["report"]
    bugs = bug_findings(rep)
    proven = [f for f in bugs if ((f.get("confirmation") or {}).get("proof") or {}).get("outcome") == "confirmed"]
    return {**r, "stages": stages(rep), "clusters": len(rep.get("clusters") or []), "bugs": len(bugs),
            "confirmed": sum(1 for f in bugs if f.get("confirmed")), "proven": len(proven),
            "repro": bool(bugs) and all(Path(f["repro"]).is_file() for f in bugs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=REPO / "benchmarks" / "models" / "live_bug_expm1.py")
    ap.add_argument("--base", type=Path, default=None, help="an older checkout to run side by side")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("extra", nargs="*", help="more eqsat-test options (after --)")
    a = ap.parse_args()
    arms = ([("older", a.base)] if a.base else []) + [("this", REPO)]
    scratch = Path(tempfile.mkdtemp(prefix="eqsat-live-bug-"))
    print(f"machine: {machine()}; model {a.model}; options: defaults {' '.join(a.extra)}")
    for name, c in arms:
        print(f"  {name}: {checkout_label(c)}")
    runs: dict[str, list[dict]] = {name: [] for name, _ in arms}
    for k in range(a.repeat):
        for name, checkout in (arms if k % 2 == 0 else arms[::-1]):
            r = one(a.model.resolve(), checkout, scratch / f"{name}{k}", a.extra)
            runs[name].append(r)
            s = r["stages"]
            print(f"  {name} #{k}: rc {r['rc']}, wall {r['wall_s']} s, cpu {r['cpu_s']} s, first verdict "
                  f"{r['first_verdict_s']} s ({r['first_verdict_exec_s']} s after execution started); stages "
                  + ", ".join(f"{k2} {v:.1f}" for k2, v in s.items() if v is not None), flush=True)
    def med(rs: list[dict], key: str) -> float:
        return statistics.median([r[key] for r in rs if r[key] is not None] or [float("nan")])

    rows = []
    for name, rs in runs.items():
        last = rs[-1]
        rows.append([name, last["rc"], f"{med(rs, 'wall_s'):.1f}", f"{med(rs, 'cpu_s'):.1f}",
                     f"{med(rs, 'first_verdict_s'):.1f}", f"{med(rs, 'first_verdict_exec_s'):.1f}", last["clusters"],
                     last["bugs"],
                     f"{last['confirmed']}/{last['bugs']}", f"{last['proven']}", "yes" if last["repro"] else "no"])
    print(table(rows, ["checkout", "exit", "wall s", "cpu s", "1st verdict s", "(from exec) s", "root causes",
                       "candidates", "confirmed", "proven fresh", "repro.py"]))
    t = runs["this"]
    if a.base:
        o = runs["older"]
        print("older/this: " + ", ".join(f"{label} {med(o, key) / med(t, key):.2f}x" for label, key in (
            ("wall", "wall_s"), ("cpu", "cpu_s"), ("first verdict", "first_verdict_s"))))
    print(f"goals: first verdict <= {GOAL_FIRST:g} s (this: {med(t, 'first_verdict_s'):.1f} s from the command's start, "
          f"{med(t, 'first_verdict_exec_s'):.1f} s from execution's), whole run <= {GOAL_WHOLE:g} s (this: "
          f"{med(t, 'wall_s'):.1f} s)")


if __name__ == "__main__":
    main()

"""Programs judged per core-hour on small programs: this checkout against an older one (--base), the same programs and options, side by side in one run.

    python benchmarks/judged_per_core_hour.py --base DIR [PROGRAM.py ...] [--options "..."] [--out DIR]

Three arms, one core each (--jobs 1), the same OPTIONS:
  older, this:  one `eqsat-test run PROGRAM --jobs 1 OPTIONS` per program, as a campaign's job runs it
                (generation, execution, confirmation, minimization and whatever a default run does after them:
                the older code collects the findings' artifacts before its summary, this one proves each root
                cause's repro.py in a fresh process instead), the two checkouts in turn, the order alternating
                from program to program;
  this, one run: `eqsat-test run PROGRAM... --jobs 1 OPTIONS`, every program in one process on the same warm
                worker (runners/cli/many.py).
Each arm has an Inductor cache of its own, shared by its runs as a campaign's jobs share one, holding only the
toolchain set-up at the start. Counted: the program tasks judged (the seed and its variants; sweep points
apart), the CPU seconds of the commands and every process they waited for (getrusage of the children: the
steady figure on a machine shared with other work) and the wall seconds (one core's worth: --jobs 1). Judged
per core-hour = program tasks / CPU hours; the wall figure is printed beside it. Totals for all programs, and
for the per-program arms also for those with compiler-bug candidates and those without, so that neither hides
the other.

Default programs: the bugzoo-like seeds of benchmarks/clustering.py (benchmarks/models/clustering/, eleven
with live bugs, two clean) and the seeds of benchmarks/fault_seeds/ (clean under Inductor); default OPTIONS
are a hunt's per-program settings (4 variants, no sweeps, 2 s of saturation).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.cli_run import REPO, bug_findings, checkout_label, run_cli  # noqa: E402
from benchmarks.common import machine, table  # noqa: E402
from benchmarks.throughput import fresh_cache  # noqa: E402

HUNT = "--variants 4 --no-sweep --sat-seconds 2"
PROGRAMS = sorted((REPO / "benchmarks" / "models" / "clustering").glob("*.py")) + sorted(
    (REPO / "benchmarks" / "fault_seeds").glob("*.py"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", type=Path)
    ap.add_argument("--base", type=Path, required=True, help="the older checkout")
    ap.add_argument("--options", default=HUNT, help=f"eqsat-test options for every run (default: {HUNT!r})")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    programs = [p.resolve() for p in a.programs] or PROGRAMS
    scratch = a.out or Path(tempfile.mkdtemp(prefix="eqsat-judged-"))
    arms = [("older", a.base), ("this", REPO)]
    print(f"machine: {machine()}; {len(programs)} programs; options: --jobs 1 {a.options}")
    for name, c in arms:
        print(f"  {name}: {checkout_label(c)}")
    caches = {name: fresh_cache(scratch) for name in ("older", "this", "one run")}
    rows, runs = [], []
    for k, prog in enumerate(programs):
        got = {}
        for name, checkout in (arms if k % 2 == 0 else arms[::-1]):
            r = run_cli(["run", str(prog), "--jobs", "1", *a.options.split()], scratch / name / prog.stem, checkout,
                        cache=caches[name])
            rep = r["report"]
            got[name] = {"tasks": int((rep.get("stats") or {}).get("program_tasks") or rep.get("executed") or 0),
                         "bugs": len(bug_findings(rep)), "cpu": r["cpu_s"], "wall": r["wall_s"], "rc": r["rc"]}
        runs.append((prog, got))
        o, t = got["older"], got["this"]
        rows.append([prog.name, f"{o['tasks']}/{t['tasks']}", f"{o['bugs']}/{t['bugs']}", f"{o['cpu']:.0f}/{t['cpu']:.0f}",
                     f"{o['wall']:.0f}/{t['wall']:.0f}", f"{o['cpu'] / max(t['cpu'], 1e-9):.2f}x"])
        print(f"  {prog.name}: older {o}, this {t}", flush=True)
    print(table(rows, ["program", "tasks older/this", "candidates", "cpu s", "wall s", "cpu older/this"]))
    shared = run_cli(["run", *map(str, programs), "--jobs", "1", *a.options.split()], scratch / "one-run", REPO,
                     cache=caches["one run"])
    tasks = sum(int((rep.get("stats") or {}).get("program_tasks") or 0) for rep in _reports(scratch / "one-run", programs))
    older_tasks = sum(g["older"]["tasks"] for _, g in runs)
    older_cpu, older_wall = sum(g["older"]["cpu"] for _, g in runs), sum(g["older"]["wall"] for _, g in runs)
    print(f"this, one run of all {len(programs)} programs: exit {shared['rc']}, {tasks} program tasks, cpu "
          f"{shared['cpu_s']:.0f} s, wall {shared['wall_s']:.0f} s: judged per CPU core-hour "
          f"{3600.0 * tasks / shared['cpu_s']:.0f} ({3600.0 * tasks / shared['cpu_s'] / (3600.0 * older_tasks / older_cpu):.2f}x "
          f"older's), per wall core-hour {3600.0 * tasks / shared['wall_s']:.0f} "
          f"({3600.0 * tasks / shared['wall_s'] / (3600.0 * older_tasks / older_wall):.2f}x older's)")
    for label, pick in (("all programs", lambda g: True), ("with candidates", lambda g: g["older"]["bugs"] > 0),
                        ("without candidates", lambda g: g["older"]["bugs"] == 0)):
        part = [g for _, g in runs if pick(g)]
        if not part:
            continue
        rate = {name: 3600.0 * sum(g[name]["tasks"] for g in part) / max(sum(g[name]["cpu"] for g in part), 1e-9)
                for name, _ in arms}
        wall = {name: 3600.0 * sum(g[name]["tasks"] for g in part) / max(sum(g[name]["wall"] for g in part), 1e-9)
                for name, _ in arms}
        print(f"{label} ({len(part)}): judged per CPU core-hour older {rate['older']:.0f}, this {rate['this']:.0f}: "
              f"{rate['this'] / rate['older']:.2f}x; per wall core-hour (--jobs 1) older {wall['older']:.0f}, "
              f"this {wall['this']:.0f}: {wall['this'] / wall['older']:.2f}x")


def _reports(out: Path, programs: list[Path]) -> list[dict]:
    import json
    return [json.loads((out / p.stem / "results.json").read_text())["report"] for p in programs
            if (out / p.stem / "results.json").is_file()]


if __name__ == "__main__":
    main()

"""One `eqsat-test` command line of a given checkout, timed: wall seconds, CPU seconds of its whole process tree, when its first verdict landed, and its report (the speed benchmarks share it).

The checkout is a folder holding the eqsat_test package (this repository, or an older worktree made with
`git worktree add`); the command runs with that folder first on PYTHONPATH, so it and its workers run that
code. CPU seconds are the user and system time of the command and every process it waited for (its workers,
compilers, repro runs): on a machine shared with other work they move less than wall seconds do.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.throughput import REPO, fresh_cache  # noqa: E402


def run_cli(args: list, out: Path, checkout: Path = REPO, timeout: float = 3600.0, cache: Path | None = None) -> dict:
    """Run `eqsat-test ARGS --out OUT` from `checkout`: {"rc", "wall_s", "cpu_s", "first_verdict_s" (from the
    command's start), "first_verdict_exec_s" (from execution's start, as verdicts.jsonl says), "report",
    "stderr"}. Inductor's cache: `cache`, else one of the run's own that holds only the toolchain set-up
    (benchmarks/throughput.py's fresh_cache), so that no run reuses another's compiles."""
    out = Path(out)
    env = dict(os.environ)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(cache or fresh_cache(out.parent))
    env["PYTHONPATH"] = os.pathsep.join([str(checkout)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    err = out.parent / f"{out.name}.stderr.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    stream = out / "verdicts.jsonl"
    first = None
    t0 = time.monotonic()
    with open(err, "w") as fh:
        p = subprocess.Popen([sys.executable, "-m", "eqsat_test.runners.cli", *map(str, args), "--out", str(out)],
                             cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=fh)
        while p.poll() is None and time.monotonic() - t0 < timeout:
            if first is None and stream.is_file() and '"type": "result"' in stream.read_text():
                first = time.monotonic() - t0
            time.sleep(0.05)
        if p.poll() is None:
            p.kill()
        rc = p.wait()
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [json.loads(x) for x in stream.read_text().splitlines()] if stream.is_file() else []
    results = [x for x in lines if x["type"] == "result"]
    if first is None and results:  # (finished between two polls)
        first = wall
    report = json.loads((out / "results.json").read_text())["report"] if (out / "results.json").is_file() else {}
    return {"rc": rc, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "first_verdict_s": None if first is None else round(first, 1),
            "first_verdict_exec_s": results[0]["seconds"] if results else None, "report": report,
            "stderr": err.read_text()[-4000:]}


def stages(report: dict) -> dict:
    """Seconds per stage of a run's report: exec (the tasks), confirm, minimize, prove, artifacts (older runs
    collected them before their summary), total (from execution's start)."""
    st = report.get("stats") or {}
    conf = st.get("confirm") or {}
    return {"exec": st.get("wall_seconds"), "confirm": conf.get("seconds"), "minimize": (st.get("minimize") or {}).get("seconds"),
            "prove": (conf.get("proof") or {}).get("seconds"), "artifacts": (st.get("artifacts") or {}).get("seconds"),
            "total": st.get("wall_seconds_total")}


def bug_findings(report: dict) -> list[dict]:
    """The compiler-bug candidates of a report (each with a repro.py)."""
    from eqsat_test.runners.records import BUG_KINDS
    return [f for f in report.get("findings", []) if f.get("repro") and f.get("kind") in BUG_KINDS]


def checkout_label(checkout: Path) -> str:
    """The checkout's folder and commit, for the printout."""
    try:
        rev = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = "?"
    return f"{checkout} @ {rev or '?'}"

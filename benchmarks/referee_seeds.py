"""The independent referee through the whole tool: `eqsat-test SEED` on each seed of tests/models/referee/ (the ledger's CPU patterns, eager-side and compiled-side), and the finding kind and referee line it reports.

    python benchmarks/referee_seeds.py [--only NAME,NAME] [--jobs 2]

A seed named eager_* holds a bug of eager's (the finding must be an `eager-bug` naming its
reference); compiled_* a compiler bug (the finding must stay a miscompile or crash, the referee
convicting compiled); *_cuda seeds need a GPU (run with --device cuda on the GPU host). Seeds whose
bug needs an integer dtype are float models reached by the int8 sweep (their files say so).
Prints one row per seed and the number that came out as expected.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import REPO, machine, table  # noqa: E402

SEEDS = REPO / "tests" / "models" / "referee"
BUGS = ("miscompile", "seed-miscompile", "compile-crash", "run-crash", "eager-bug")
SWEEP = {"eager_index_add_float_alpha": ["--dtypes", "int8", "--sweep-sizes", "none", "--sweep-dynamic", "none"]}


def run(seed: Path, device: str, jobs: int) -> dict:
    out = Path(tempfile.mkdtemp(prefix="eqsat-referee-"))
    sweep = SWEEP.get(seed.stem, ["--no-sweep"])
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "run", str(seed), "-n", "2", "--json",
                        "--no-artifacts", "--no-minimize", "-j", str(jobs), "-d", device, "--out", str(out), *sweep],
                       capture_output=True, text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        findings = [f for f in json.loads(p.stdout)["findings"] if f["kind"] in BUGS]
    except (json.JSONDecodeError, KeyError):
        findings = []
    f = next((f for f in findings if f["kind"] == "eager-bug"), findings[0] if findings else {})
    return {"rc": p.returncode, "seconds": time.perf_counter() - t0, "kind": f.get("kind", "-"),
            "line": f.get("referee_line") or (p.stderr.strip().splitlines() or [""])[-1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    seeds = sorted(SEEDS.glob("*.py"))
    if a.only:
        seeds = [s for s in seeds if s.stem in a.only.split(",")]
    if a.device == "cpu":
        seeds = [s for s in seeds if not s.stem.endswith("_cuda")]
    rows, good, t0 = [], 0, time.perf_counter()
    for s in seeds:
        r = run(s, a.device, a.jobs)
        want = "eager-bug" if s.stem.startswith("eager_") else "compiler kind"
        ok = (r["kind"] == "eager-bug") if want == "eager-bug" else (r["kind"] in BUGS[:4])
        good += ok
        rows.append([s.stem, want, r["kind"], "yes" if ok else "NO", f"{r['seconds']:.0f}", r["line"][:150]])
        print(f"  {s.stem}: {r['kind']} ({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
    print(f"machine: {machine()}; eqsat-test -n 2 --no-artifacts --no-minimize -j {a.jobs} -d {a.device}; "
          f"{time.perf_counter() - t0:.0f}s")
    print(table(rows, ["seed", "expected", "finding", "as expected", "s", "referee"]))
    print(f"{good}/{len(rows)} seeds as expected")
    return 0 if good == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

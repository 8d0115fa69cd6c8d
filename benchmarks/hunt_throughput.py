"""Hunt throughput: programs (seeds and variants) judged per core-hour with the hunt's per-program settings vs a campaign's defaults, on the same generated programs, side by side in one run; and the generator's own rate.

    python benchmarks/hunt_throughput.py [--programs 6] [--seed 900] [--out DIR]

Each arm runs `eqsat-test run PROGRAM --json --jobs 1` on every program in turn (generation, execution,
confirmation, minimization and artifacts included, as a hunt's job does) and counts the program tasks judged
(the seed and its variants; sweep points apart) and the CPU seconds of the command and all its processes
(getrusage of the children): CPU seconds are the steady figure on a shared machine, wall seconds are printed
beside them. Arms: "hunt" (`eqsat-test fuzz`'s settings: 4 variants, no sweeps, 2 s of saturation) and
"campaign defaults" (16 variants, the dtype and size sweeps). The generator's rate is programs drawn and
checked (fake tensors, one eager run) per CPU second, in this process.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, machine  # (benchmarks/common.py puts the repository on sys.path)

ARMS = {
    "hunt": ["--variants", "4", "--no-sweep", "--sat-seconds", "2", "--minimize-seconds", "120",
             "--artifacts-max", "2"],
    "campaign defaults": ["--variants", "16"],
}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_arm(name: str, args: list[str], programs: list[Path], out: Path) -> dict:
    tasks = cpu = wall = 0.0
    found = 0
    for p in programs:
        c0, t0 = children_cpu(), time.monotonic()
        r = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "run", str(p), "--json", "--jobs", "1",
                            "--out", str(out / name.replace(" ", "_") / p.stem), *args],
                           capture_output=True, text=True, cwd=REPO,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
        wall += time.monotonic() - t0
        cpu += children_cpu() - c0
        try:
            rep = json.loads(r.stdout)
        except json.JSONDecodeError:
            print(f"  {name}: {p.name}: exit {r.returncode}, no report: {r.stderr.strip().splitlines()[-1:]}")
            continue
        st = rep.get("stats") or {}
        tasks += int(st.get("program_tasks") or rep.get("executed") or 0)
        found += int(st.get("compiler_bugs") or 0)
        print(f"  {name}: {p.name}: {st.get('program_tasks')} program tasks, exit {r.returncode}, "
              f"{time.monotonic() - t0:.0f} s wall")
    return {"tasks": tasks, "cpu": cpu, "wall": wall, "found": found,
            "per_core_hour": tasks / (cpu / 3600) if cpu else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=900, help="the first program's generator seed")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    from eqsat_test.hunt.__main__ import make_one
    from eqsat_test.hunt.program import GenOptions
    out = a.out or Path(tempfile.mkdtemp(prefix="hunt-throughput-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    c0 = time.process_time()
    made, seed = [], a.seed
    drawn = 0
    while len(made) < a.programs:
        r = make_one(seed, GenOptions(), out)
        drawn += 1
        seed += 1
        if r["ok"]:
            made.append(Path(r["path"]))
    gen_cpu = time.process_time() - c0
    print(f"generator: {drawn} programs drawn and checked in {gen_cpu:.1f} CPU s "
          f"({drawn / gen_cpu * 3600:.0f} per core-hour); {len(made)} kept")
    res = {name: run_arm(name, args, made, out) for name, args in ARMS.items()}
    print(f"\n{'arm':<20} {'tasks':>6} {'CPU s':>8} {'wall s':>8} {'judged/core-hour':>17} {'candidates':>10}")
    for name, r in res.items():
        print(f"{name:<20} {r['tasks']:>6.0f} {r['cpu']:>8.0f} {r['wall']:>8.0f} {r['per_core_hour']:>17.0f} "
              f"{r['found']:>10}")
    h, d = res["hunt"], res["campaign defaults"]
    if h["per_core_hour"] and d["per_core_hour"]:
        print(f"hunt settings judge {h['per_core_hour'] / d['per_core_hour']:.2f}x the tasks per core-hour of the "
              f"campaign defaults; {h['cpu'] / max(1, len(made)):.0f} vs {d['cpu'] / max(1, len(made)):.0f} CPU s per "
              f"program")


if __name__ == "__main__":
    main()

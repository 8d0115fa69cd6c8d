"""Hunt throughput: programs (seeds and variants) judged per core-hour with the hunt's per-program settings, one program a process and several a process, vs a campaign's defaults, on the same generated programs, side by side in one run; and the generator's own rate.

    python benchmarks/hunt_throughput.py [--programs 6] [--per-job 8[,4...]] [--seed 900] [--arms A,B] [--out DIR]

Each arm runs `eqsat-test run PROGRAM... --json --jobs 1` on the programs in turn (generation, execution,
confirmation, minimization and artifacts included, as a hunt's job does) and counts the program tasks judged
(the seed and its variants; sweep points apart; read from each program's report.json) and the CPU seconds of the
commands and all their processes (getrusage of the children): CPU seconds are the steady figure on a shared
machine, wall seconds are printed beside them. Arms: "hunt" (`eqsat-test fuzz`'s settings: 4 variants, no sweeps,
2 s of saturation; one program a process, as `--programs-per-job 1`), "hunt, N a process" (the same settings,
--per-job programs in each `eqsat-test run`, as a hunt's job of --programs-per-job programs; one arm per number
given) and
"campaign defaults" (16 variants, the dtype and size sweeps; one a process). Each arm has an Inductor cache of
its own, shared by its runs as a hunt's worker slot shares one, holding only the toolchain set-up at the start.
The generator's rate is programs drawn and checked (fake tensors, one eager run) per CPU second, in this process.
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
from throughput import fresh_cache

HUNT = ["--variants", "4", "--no-sweep", "--sat-seconds", "2", "--minimize-seconds", "120", "--artifacts-max", "2"]
ARMS = {  # --arms name: (label, options, programs a process: 0 for --per-job)
    "hunt": ("hunt", HUNT, 1),
    "batched": ("hunt, {n} a process", HUNT, 0),
    "defaults": ("campaign defaults", ["--variants", "16"], 1),
}


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_arm(name: str, args: list[str], programs: list[Path], out: Path, per: int) -> dict:
    """The programs through `eqsat-test run`, `per` of them a process; tasks judged, CPU and wall seconds."""
    tasks = cpu = wall = 0.0
    found = 0
    arm = out / name.replace(" ", "_").replace(",", "")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TORCHINDUCTOR_CACHE_DIR": str(fresh_cache(out))}
    for k in range(0, len(programs), per):
        chunk = programs[k:k + per]
        dest = arm / chunk[0].stem if per == 1 else arm / f"job{k // per}"
        c0, t0 = children_cpu(), time.monotonic()
        r = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "run", *map(str, chunk), "--json",
                            "--jobs", "1", "--out", str(dest), *args], capture_output=True, text=True, cwd=REPO,
                           env=env)
        wall += time.monotonic() - t0
        cpu += children_cpu() - c0
        for p in chunk:
            try:
                rep = json.loads((dest / "report.json" if per == 1 else dest / p.stem / "report.json").read_text())
            except (OSError, json.JSONDecodeError):
                print(f"  {name}: {p.name}: exit {r.returncode}, no report: {r.stderr.strip().splitlines()[-1:]}")
                continue
            st = rep.get("stats") or {}
            tasks += int(st.get("program_tasks") or rep.get("executed") or 0)
            found += int(st.get("compiler_bugs") or 0)
            print(f"  {name}: {p.name}: {st.get('program_tasks')} program tasks")
        print(f"  {name}: {len(chunk)} program(s) in one process: exit {r.returncode}, "
              f"{time.monotonic() - t0:.0f} s wall", flush=True)
    return {"tasks": tasks, "cpu": cpu, "wall": wall, "found": found,
            "per_core_hour": tasks / (cpu / 3600) if cpu else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=6)
    ap.add_argument("--per-job", default="8", help="programs a process in the arm 'hunt, N a process' (several, "
                    "comma-separated: an arm each)")
    ap.add_argument("--arms", default=",".join(ARMS),
                    help=f"the arms to run, comma-separated, of {', '.join(ARMS)} (default: all)")
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
    chosen = {x.strip() for x in a.arms.split(",")}
    if chosen - set(ARMS):
        ap.error(f"--arms: no arm named {', '.join(sorted(chosen - set(ARMS)))}")
    res = {}
    for name, (label, args, per) in ARMS.items():
        if name in chosen:
            for n in ([int(x) for x in a.per_job.split(",")] if not per else [per]):
                res[label.format(n=n)] = run_arm(label.format(n=n), args, made, out, n)
    print(f"\n{'arm':<20} {'tasks':>6} {'CPU s':>8} {'wall s':>8} {'judged/core-hour':>17} {'candidates':>10}")
    for name, r in res.items():
        print(f"{name:<20} {r['tasks']:>6.0f} {r['cpu']:>8.0f} {r['wall']:>8.0f} {r['per_core_hour']:>17.0f} "
              f"{r['found']:>10}")
    h, d = res.get("hunt"), res.get("campaign defaults")
    if h and d and h["per_core_hour"] and d["per_core_hour"]:
        print(f"hunt settings judge {h['per_core_hour'] / d['per_core_hour']:.2f}x the tasks per core-hour of the "
              f"campaign defaults; {h['cpu'] / max(1, len(made)):.0f} vs {d['cpu'] / max(1, len(made)):.0f} CPU s per "
              f"program")
    for n in [int(x) for x in a.per_job.split(",")]:
        b = res.get(f"hunt, {n} a process")
        if h and b and h["per_core_hour"] and b["per_core_hour"]:
            print(f"{n} programs a process judge {b['per_core_hour'] / h['per_core_hour']:.2f}x the tasks per "
                  f"core-hour of one a process; {b['cpu'] / max(1, len(made)):.0f} vs "
                  f"{h['cpu'] / max(1, len(made)):.0f} CPU s per program")
        elif b:
            print(f"{n} programs a process: {b['cpu'] / max(1, len(made)):.0f} CPU s per program")


if __name__ == "__main__":
    main()

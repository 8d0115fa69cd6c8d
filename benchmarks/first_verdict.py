"""Time to the first verdict of `scripts/try.sh` on a fresh machine: cold caches (rules, Inductor, Triton), with the compiled rule library shipped in the package and without it, side by side.

    python benchmarks/first_verdict.py [MODEL.py] [--without]   # --without: also the run that compiles the library

Each run starts `bash scripts/try.sh MODEL --out TMP` (set-up done: the script's set-up step finds nothing to
do) with XDG_CACHE_HOME, TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR in a new empty folder, and stops it at
its first verdict (the first result line of TMP/verdicts.jsonl). It prints the seconds from the command's start
to that verdict, and where the time went until then (from the run's own stage lines).
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def first_verdict(model: str, shipped: bool, limit: float = 1800.0) -> dict:
    root = Path(tempfile.mkdtemp(prefix="eqsat-first-verdict-"))
    env = dict(os.environ, XDG_CACHE_HOME=str(root / "cache"), TORCHINDUCTOR_CACHE_DIR=str(root / "inductor"),
               TRITON_CACHE_DIR=str(root / "triton"))
    env.pop("EQSAT_TEST_CACHE", None)
    if not shipped:
        env["EQSAT_TEST_NO_PREBUILT"] = "1"
    out = root / "out"
    log = root / "stderr.txt"
    t0 = time.monotonic()
    with open(log, "w") as err:
        p = subprocess.Popen(["bash", str(REPO / "scripts" / "try.sh"), model, "--out", str(out)], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        seconds = None
        stream = out / "verdicts.jsonl"
        while time.monotonic() - t0 < limit and p.poll() is None:
            if stream.is_file() and '"type": "result"' in stream.read_text():
                seconds = time.monotonic() - t0
                break
            time.sleep(0.1)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    lines = log.read_text().splitlines()
    rules = next((ln for ln in lines if "rules loaded" in ln), "")  # "NAME: 1 graph(s) captured, N rules loaded (T s)"
    m = re.search(r"\((\d+) s\)$", rules)
    return {"model": model, "shipped": shipped, "first_verdict_s": None if seconds is None else round(seconds, 1),
            "load_rules_capture_s": int(m.group(1)) if m else None, "exit": p.returncode if seconds is None else None,
            "log": str(log)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", nargs="?", default="examples/elementwise.py")
    ap.add_argument("--without", action="store_true", help="also measure the run that compiles the library itself")
    a = ap.parse_args()
    load = os.getloadavg()[0]
    print(f"cores: {len(os.sched_getaffinity(0))}, load average at start: {load:.1f}")
    rows = [first_verdict(a.model, shipped=True)]
    if a.without:
        rows.append(first_verdict(a.model, shipped=False))
    print(f"{'model':<28} {'compiled rules':<16} {'first verdict s':>15} {'load+rules+capture s':>21}")
    for r in rows:
        print(f"{r['model']:<28} {'shipped' if r['shipped'] else 'compiled here':<16} {str(r['first_verdict_s']):>15} "
              f"{str(r['load_rules_capture_s']):>21}" + (f"  (no verdict: exit {r['exit']}, {r['log']})"
                                                          if r["first_verdict_s"] is None else ""))
    if len(rows) == 2 and all(r["first_verdict_s"] for r in rows):
        print(f"ratio (compiled here / shipped): {rows[1]['first_verdict_s'] / rows[0]['first_verdict_s']:.1f}x")


if __name__ == "__main__":
    main()

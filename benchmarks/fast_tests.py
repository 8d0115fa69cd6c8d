"""The fast test set's wall time, this checkout against an older one, side by side in one run, on the tests both have.

    python benchmarks/fast_tests.py --base DIR [--repeat 2] [-n 2]

Both checkouts run `pytest -m "not slow and not gpu" -n N --dist loadgroup` with this interpreter (an older worktree:
`git worktree add --detach DIR COMMIT`); each runs only the tests the other has too (the rest deselected by id), so
the two arms time the same tests. The arms are interleaved (older, this, older, this ...) so that load from other
work falls on both. Printed per run: wall seconds and pytest's summary line; then the mean per arm and older/this.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FAST = ["-m", "not slow and not gpu", "-p", "no:cacheprovider"]


def fast_test_ids(checkout: Path) -> set[str]:
    """The fast set's test ids in `checkout`, as pytest collects them there."""
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", *FAST], cwd=checkout,
                       capture_output=True, text=True)
    return {line.strip() for line in p.stdout.splitlines() if "::" in line}


def deselected(mine: set[str], other: set[str]) -> list[str]:
    """pytest arguments that leave out the tests of `mine` that `other` lacks."""
    return [a for t in sorted(mine - other) for a in ("--deselect", t)]


def run(checkout: Path, workers: int, skip: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", *FAST, "-n", str(workers), "--dist", "loadgroup", *skip],
                       cwd=checkout, capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    return time.perf_counter() - t0, (lines[-1] if lines else f"exit {p.returncode}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="the older checkout")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("-n", type=int, default=2, help="pytest-xdist workers")
    a = ap.parse_args()
    arms = {"older": a.base.resolve(), "this": REPO}
    ids = {k: fast_test_ids(d) for k, d in arms.items()}
    skip = {"older": deselected(ids["older"], ids["this"]), "this": deselected(ids["this"], ids["older"])}
    print(f"python {sys.executable}; tests in both: {len(ids['older'] & ids['this'])} "
          f"(left out: {len(skip['older']) // 2} only in the older, {len(skip['this']) // 2} only in this)")
    walls: dict[str, list[float]] = {k: [] for k in arms}
    for i in range(a.repeat):
        for k, d in arms.items():
            wall, summary = run(d, a.n, skip[k])
            walls[k].append(wall)
            print(f"  {k} #{i}: {wall:.1f} s | {summary}", flush=True)
    mean = {k: statistics.mean(v) for k, v in walls.items()}
    print(f"mean: older {mean['older']:.1f} s, this {mean['this']:.1f} s; older/this {mean['older'] / mean['this']:.2f}x")


if __name__ == "__main__":
    main()

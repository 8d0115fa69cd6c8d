"""Windows yield: over a folder of model files (default the corpus), how many capture, how many yield windows, and how many of the windows cut pass the hunt's check (hunt/check.py), by the stage that discards the rest.

    python benchmarks/windows_yield.py [--seeds 3] [PATH ...]

Each model file is captured once (hunt/windows.py: as `eqsat-test run` captures it, at the hunt's tensor bound),
then windows of seeds 0..SEEDS-1 are cut from it and checked (load, fake tensors, one eager run), in this process.
"""
from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from common import REPO, machine, table  # (benchmarks/common.py puts the repository on sys.path)

from eqsat_test.hunt.check import check_source
from eqsat_test.hunt.sources import model_files
from eqsat_test.hunt.windows import CutError, captured, cut


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", default=[str(REPO / "benchmarks" / "corpus")])
    ap.add_argument("--seeds", type=int, default=3, help="windows tried per model file")
    args = ap.parse_args()
    files = model_files(args.paths)
    models = Counter()
    windows = Counter()
    why: Counter = Counter()
    ops: Counter = Counter()
    t0 = time.monotonic()
    for f in files:
        models["files"] += 1
        try:
            src = captured(f)
        except CutError as e:
            models["no capture"] += 1
            why["capture: " + e.reason.replace(f, "FILE")[:70]] += 1
            continue
        models["captured"] += 1
        passed = 0
        for seed in range(args.seeds):
            windows["tried"] += 1
            try:
                w = cut(seed, src)
            except CutError as e:
                windows["no window"] += 1
                why["cut: " + e.reason.split("(last: ")[-1].rstrip(")").replace(src.path, "FILE")[:70]] += 1
                continue
            windows["cut"] += 1
            verdict = check_source(w.source(), f"{Path(f).stem}-w{seed}.py")
            windows[f"check {verdict.stage}"] += 1
            if verdict.ok:
                passed += 1
                ops.update(w.ops)
        if passed:
            models["yield a window that passes"] += 1
    print(f"windows yield over {len(files)} model files, {args.seeds} seed(s) each; {machine()}; "
          f"{time.monotonic() - t0:.0f} s")
    print(table([[k, v] for k, v in models.items()], ["models", "count"]))
    print()
    print(table([[k, v] for k, v in windows.items()], ["windows", "count"]))
    print()
    print(table([[k, v] for k, v in why.most_common(12)], ["not cut, why (most common)", "count"]))
    print()
    print(f"ops in windows that pass: {len(ops)} distinct; most common: "
          + ", ".join(f"{k} {v}" for k, v in ops.most_common(15)))


if __name__ == "__main__":
    main()

"""Generation over the model zoo (benchmarks/zoo/): per model, whether it loads and captures, its graphs and ops, the
in-place ops made out-of-place, the distinct variants it gets, and the seconds each stage took; one line per model whose
library is missing. No compiler runs: this is what `eqsat-test MODEL -n N` makes before executing.

    python benchmarks/zoo_generate.py [-n 32] [--sat-seconds 10] [MODEL.py ...]   (default: every zoo model)
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ZOO = Path(__file__).resolve().parent / "zoo"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path)
    ap.add_argument("-n", "--variants", type=int, default=32)
    ap.add_argument("--sat-seconds", type=float, default=10.0)
    args = ap.parse_args(argv)
    from eqsat_test.lowering.load import BadInput
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from eqsat_test.rewrite.saturate import Budget
    models = args.models or sorted(ZOO.glob("*.py"))
    print(f"{'model':24} {'graphs':>6} {'ops':>5} {'fn':>3} {'variants':>8} {'seconds':>7}  stages / why")
    bad = 0
    for m in models:
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            try:
                man = generate(m, Path(tmp) / "b", GenerateOptions(variants=args.variants,
                                                                   budget=Budget(seconds=args.sat_seconds)))
            except BadInput as e:
                print(f"{m.stem:24} {'-':>6} {'-':>5} {'-':>3} {'-':>8} {time.perf_counter() - t0:7.1f}  skipped: {e}")
                continue
            except Exception as e:  # noqa: BLE001 - an internal error: reported, counted
                bad += 1
                print(f"{m.stem:24} internal error: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
                continue
        gs = man.graphs
        nv = man.rewritten_count
        why = "; ".join(g.skipped_rewrites for g in gs if g.skipped_rewrites)
        why += "; ".join(g.why for g in man.graphs_left_out)
        stages = " ".join(f"{k}={v:.1f}" for k, v in man.timings.items())
        print(f"{m.stem:24} {len(gs):>6} {sum(g.ops for g in gs):>5} {sum(g.functionalized for g in gs):>3} "
              f"{nv:>8} {time.perf_counter() - t0:7.1f}  {stages}{'  ' + why if why else ''}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

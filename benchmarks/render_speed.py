"""Rendering variant modules: the FX graph alone with cached target names (what generation does) against a GraphModule
per variant with names resolved afresh (what it did), on the same stored programs, interleaved, in one process.

    python benchmarks/render_speed.py BUNDLE_DIR [--rounds 3]     (a bundle: `eqsat-test generate MODEL -o DIR`)
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    from eqsat_test.lowering import targets
    from eqsat_test.lowering.bundle import read_program
    from eqsat_test.lowering.emit import emit_module
    from eqsat_test.lowering.lower import to_fx
    sps = [read_program(f) for f in sorted(args.bundle.glob("*.program.json"))]

    def before(sp):
        targets._NAMES.clear()
        return emit_module(to_fx(sp.program, sp.input_names), title=sp.title, inputs_file=sp.inputs_file,
                           input_names=list(sp.input_names), notes=list(sp.notes), effects=list(sp.effects))

    times = {"graph + cached names": [], "GraphModule, names afresh": []}
    for _ in range(args.rounds):
        for label, fn in (("GraphModule, names afresh", before), ("graph + cached names", lambda sp: sp.render())):
            t0 = time.perf_counter()
            texts = [fn(sp) for sp in sps]
            times[label].append(time.perf_counter() - t0)
    assert texts == [before(sp) for sp in sps], "the two ways render different modules"
    ops = sum(sp.program.num_ops for sp in sps) / max(1, len(sps))
    print(f"{len(sps)} programs of {args.bundle} ({ops:.0f} ops on average), median of {args.rounds} rounds:")
    for label, ts in times.items():
        print(f"  {label:28} {statistics.median(ts):7.3f} s  ({1e3 * statistics.median(ts) / len(sps):.1f} ms a program)")
    a, b = (statistics.median(times[k]) for k in ("GraphModule, names afresh", "graph + cached names"))
    print(f"  speed-up: {a / b:.2f}x")


if __name__ == "__main__":
    sys.exit(main())

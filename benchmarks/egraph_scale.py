"""E-graph scale: lift + saturate + extract N variants for random graphs of 200, 1,000, 5,000 ops.

    python benchmarks/egraph_scale.py [--sizes 200,1000,5000] [--variants 32] [--rules SPEC] [--profile]

Prints e-node counts and seconds per stage (the same functions `eqsat-test generate` calls, with
its default budget), and the totals against the targets (1,000 ops <= 3 s, 5,000 ops <= 20 s).
`--profile` also prints the top cProfile entries per size.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Timer, compiled_rules, machine, table  # noqa: E402

TARGETS = {1000: 3.0, 5000: 20.0}


def run_size(n_ops: int, compiled, variants: int, seed: int, budget) -> dict:
    from benchmarks.graphs import random_graph
    from eqsat_test.lowering.lift import lift_fx
    from eqsat_test.rewrite.extract import extract_variants, read_egraph
    from eqsat_test.rewrite.generate import rules_applied
    from eqsat_test.rewrite.saturate import saturate

    gm, _ = random_graph(n_ops, seed=seed)
    t = Timer()
    with t("lift"):
        prog = lift_fx(gm).program
    with t("saturate"):
        sat = saturate(prog, compiled, budget)
    with t("extract"):
        ec = read_egraph(sat.lifted.egraph, sat.lifted.root, prog, sat.lifted.node_names)
        ex = extract_variants(ec, variants, seed=seed, max_ops=int(prog.num_ops * 4.0) + 16,
                              exclude={prog.key()})
    with t("attribute"):
        applied = [rules_applied(p, prog, compiled) for p, _ in ex.variants]
    del sat.lifted.egraph
    return {"ops": prog.num_ops, "enodes": sat.enodes, "iters": sat.iterations, "stop": sat.stop_reason,
            "eclasses": ec.num_classes, "variants": len(ex.variants), "attempts": ex.attempts,
            "with_rules": sum(1 for a in applied if a), "t": t.t, "cpu": t.cpu}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="200,1000,5000")
    ap.add_argument("--variants", type=int, default=32)
    ap.add_argument("--rules", action="append", default=[])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)

    from eqsat_test.rewrite.generate import GenerateOptions
    budget = GenerateOptions().budget
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    _, compiled, _ = compiled_rules(args.rules)
    print(f"budget: {budget}")
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        prof = cProfile.Profile() if args.profile else None
        if prof:
            prof.enable()
        r = run_size(n, compiled, args.variants, args.seed, budget)
        if prof:
            prof.disable()
            s = io.StringIO()
            pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(25)
            print(f"--- profile, {n} ops ---\n" + "\n".join(s.getvalue().splitlines()[:60]))
        t, cpu = r["t"], r["cpu"]
        total, total_cpu = sum(t.values()), sum(cpu.values())
        target = TARGETS.get(n)
        rows.append([n, r["ops"], r["enodes"], f"{r['iters']} ({r['stop']})", r["eclasses"],
                     f"{r['variants']}/{args.variants}", r["with_rules"]] +
                    [f"{t[k]:.2f} ({cpu[k]:.2f})" for k in ("lift", "saturate", "extract", "attribute")] +
                    [f"{total:.2f} ({total_cpu:.2f})",
                     f"<= {target:.0f} s: {'ok' if total <= target else 'MISSED'}" if target else "-"])
        print(table(rows[-1:], _HEADER), flush=True)
    print(f"\nload average at end {os.getloadavg()[0]:.1f}; seconds are wall (this process's CPU)")
    print(table(rows, _HEADER))


_HEADER = ["size", "ops", "e-nodes", "iterations", "e-classes", "variants", "w/ rules",
           "lift s (cpu)", "saturate s (cpu)", "extract s (cpu)", "attribute s (cpu)", "total s (cpu)", "target (wall)"]

if __name__ == "__main__":
    main()

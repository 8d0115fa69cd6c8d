"""Rule reach over the model corpus: per model its graphs, ops, distinct variants and untouched ops; totals.

    python benchmarks/rule_reach.py [MODELS_OR_DIRS...] [--variants 32] [--rules SPEC] [--ops-only] [--json FILE]

Default models: every .py file in benchmarks/corpus/ and examples/. For each graph the same
lift, saturation (default budget) and extraction `eqsat-test generate` runs (`rewrite.coverage`),
asking for `--variants` variants per graph. Prints per model: graphs, ops, distinct variants per
graph (out of those asked), the ops no rule touches; then the totals: the share of graphs with at
least that many distinct variants (target: 95%) and the call targets of the corpus that no rule
has on either side. `--ops-only` lists call targets without saturating.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, compiled_rules, machine  # noqa: E402


def model_files(args: list[str]) -> list[Path]:
    specs = args or [str(REPO / "benchmarks" / "corpus"), str(REPO / "examples")]
    out: list[Path] = []
    for s in specs:
        p = Path(s)
        if p.is_dir():
            out += sorted(f for f in p.glob("*.py") if not f.name.startswith("_"))
        elif p.is_file():
            out.append(p)
    return out


def rule_ops(compiled) -> set[str]:
    from eqsat_test.rewrite.compile_rules import pattern_ops
    out: set[str] = set()
    for cr in compiled:
        out |= pattern_ops(cr.lhs) | pattern_ops(cr.rhs)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--variants", "-n", type=int, default=32)
    ap.add_argument("--rules", "-r", action="append", default=[])
    ap.add_argument("--ops-only", action="store_true")
    ap.add_argument("--no-stratify", action="store_true")
    ap.add_argument("--json", help="write per-model results to this file")
    a = ap.parse_args(argv)

    import torch
    torch.set_num_threads(1)
    from eqsat_test.rewrite.coverage import coverage

    files = model_files(a.models)
    print(f"rule reach: {len(files)} model files, {a.variants} variants asked per graph ({machine()})")
    t0 = time.perf_counter()
    rules, compiled, errors = compiled_rules(a.rules)
    for e in errors:
        print(f"  rule error: {e}")
    in_rules = rule_ops(compiled)
    results = []
    all_ops: Counter = Counter()
    op_models: dict[str, set] = {}
    n_graphs = n_good = 0
    failures = []
    print(f"{'model':44s} {'graphs':>6s} {'ops':>5s}  variants per graph   untouched ops")
    for f in files:
        if a.ops_only:
            cov = coverage(f, compiled=(rules, []), variants=0, stratify=False,
                           budget=_no_budget())
        else:
            cov = coverage(f, compiled=(rules, compiled), variants=a.variants,
                           stratify=not a.no_stratify)
        results.append(cov.as_dict())
        name = os.path.relpath(f, REPO)
        if cov.error:
            print(f"{name:44s} error: {cov.error}")
            failures.append(name)
            continue
        for g in cov.graphs:
            all_ops.update(g.ops)
            for op in g.ops:
                op_models.setdefault(op, set()).add(name)
            n_graphs += 1
            n_good += g.distinct_variants >= a.variants
        vs = ",".join(str(g.distinct_variants) + ("*" if g.skipped else "") for g in cov.graphs)
        untouched = sorted({t for g in cov.graphs for t in g.untouched})
        print(f"{name:44s} {len(cov.graphs):6d} {sum(g.num_ops for g in cov.graphs):5d}  "
              f"{vs:18s}  {', '.join(untouched) or '-'}")
    no_rule = sorted(set(all_ops) - in_rules)
    print()
    print(f"models: {len(files)} ({len(failures)} failed to load/capture); graphs: {n_graphs}; "
          f"distinct call targets: {len(all_ops)}")
    if not a.ops_only and n_graphs:
        print(f"graphs with >= {a.variants} distinct variants: {n_good} of {n_graphs} "
              f"= {100.0 * n_good / n_graphs:.1f}% (target 95%)")
    print(f"call targets in no rule: {len(no_rule)} of {len(all_ops)}"
          + (": " + ", ".join(f"{t} ({all_ops[t]}x in {len(op_models[t])} models)" for t in no_rule)
             if no_rule else ""))
    print(f"rules: {len(rules)}, compiled rewrites: {len(compiled)}; {time.perf_counter() - t0:.0f} s")
    if a.json:
        Path(a.json).write_text(json.dumps({"models": results, "no_rule": no_rule,
                                            "graphs": n_graphs, "good": n_good}, indent=1))
    return 0


def _no_budget():
    from eqsat_test.rewrite.saturate import Budget
    return Budget(iterations=0)


if __name__ == "__main__":
    sys.exit(main())

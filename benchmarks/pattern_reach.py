"""Which of Inductor's registered pattern-matcher replacements and library kernels rules reach, measured on the compiler.

For each rule, both sides are compiled with Inductor (caches off) on an example of its variables
(`rewrite/patternreach.py rule_reach`), counting each registered pattern's applications and the
extern/fallback kernels the generated code calls. Printed: per rule, the patterns its right side
builds or breaks and the kernels it flips, whether its `builds:`/`breaks:`/`flips:` tags hold; then
the distinct registered patterns reached, against the registry's size.

    python benchmarks/pattern_reach.py                       # the rules aimed at Inductor's decisions
    python benchmarks/pattern_reach.py default               # the whole library (~3,000 compiles: GPU host)
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import machine, table  # noqa: E402
from eqsat_test.rewrite.patternreach import registry, rule_reach, unmet  # noqa: E402
from eqsat_test.rewrite.ruledsl import load_rules  # noqa: E402

AIMED = ["inductor_patterns", "inductor_paths", "layout_detours"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rules", nargs="*", default=AIMED, help="rule sets, files or folders")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    names = registry()
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d')}; registry: {len(names)} named patterns "
          f"({sum(p.entries for p in names.values())} entries) in this torch's pattern-matcher passes")
    rows, reached, flipped, failed = [], set(), set(), []
    t0 = time.perf_counter()
    rules = load_rules(a.rules)
    for r in rules:
        rr = rule_reach(r)
        plain = lambda ps: sorted(p for p in ps if "(" not in p)  # noqa: E731  (names without bound dtypes)
        b, k, f = plain(rr.built()), plain(rr.broken()), sorted(rr.flipped())
        reached |= set(b) | set(k)
        flipped |= set(f)
        miss = unmet(r, rr)
        if miss:
            failed.append(r.name)
        rows.append([r.name, r.family, ", ".join(b) or "-", ", ".join(k) or "-", ", ".join(f) or "-",
                     "NO: " + ", ".join(miss) if miss else ("yes" if any(t.split(":")[0] in ("builds", "breaks", "flips")
                                                                        for t in r.tags) else "-")])
    print(table(rows, ["rule", "family", "builds", "breaks", "flips kernels", "tags hold"]))
    print(f"\n{len(rules)} rules in {time.perf_counter() - t0:.0f} s: {len(reached)} distinct registered patterns "
          f"built or broken ({', '.join(sorted(reached))}); {len(flipped)} kernels flipped; "
          f"{sum(1 for r in rows if r[2] != '-' or r[3] != '-')} rules reach a pattern, "
          f"{sum(1 for r in rows if r[4] != '-')} flip a kernel; tags that do not hold: {failed or 'none'}")


if __name__ == "__main__":
    main()

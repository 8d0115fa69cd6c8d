"""The summary a run prints at its end: the graphs and rules, what was executed and swept, the root causes and the notes."""
from __future__ import annotations

from pathlib import Path

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.checks.line_gain import summary_line as line_gain_summary
from eqsat_test.runners.cli.runlines import executed_lines, rules_lines, stages_line, sweep_lines
from eqsat_test.runners.findings.clusters import report_clusters
from eqsat_test.runners.findings.table import report_table
from eqsat_test.runners.records import BUG_KINDS, COMPILER_BUG_KINDS, FindingKind


def summary(report: dict, manifest: Manifest, out: Path) -> str:
    """The lines `eqsat-test run` and `exec` print at the end (--json prints the report instead)."""
    lines = [f"eqsat-test: {report['model']}  (torch {report['torch_version']})"]
    lines += rules_lines(manifest)
    sz = manifest.sizes  # the sizes record (lowering/sizes.record)
    if sz and sz.get("scaled"):
        lines.append("  test size: " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in sz["scaled"].items())
                     + f" (each input <= {sz.get('max_elements')} elements; --sizes given for the file's own)")
    for g in manifest.graphs:
        if g.saturation is not None and g.extraction is not None:
            s, e = g.saturation, g.extraction
            stop = s.stop or s.stop_reason  # in words (rewrite/saturate.py STOP_REASONS)
            lines.append(f"  {g.id}: {s.enodes} e-nodes after {s.iterations} iterations ({stop}), "
                         f"~10^{e.log10_choice_space:.0f} choices, {e.distinct} distinct variants found")
            if not e.distinct:
                lines.append(f"  WARNING: {g.id} got 0 distinct variants: no rule changed it, so only the "
                             f"unmodified model was tested (which ops no rule touches: "
                             f"`eqsat-test rules coverage {report['model']}`)")
        elif g.skipped_rewrites:
            lines.append(f"  {g.id}: not rewritten ({g.skipped_rewrites})")
    st = report["stats"]
    lines += executed_lines(report) + sweep_lines(report) + stages_line(report)
    lines += ["  " + line_gain_summary(st["compiler_lines"])] if st.get("compiler_lines") else []  # --coverage
    if st.get("folded_into_seed"):
        lines.append(f"  {st['folded_into_seed']} variant candidate(s) fail like their seed: counted as the seed's finding")
    found = [f for f in report["findings"] if f.get("repro") and f["kind"] in BUG_KINDS]
    bugs = [f for f in found if f["kind"] in COMPILER_BUG_KINDS]
    eager_bugs = [f for f in found if f["kind"] == FindingKind.EAGER_BUG]  # eager the wrong side, by the referee
    clusters = [c.to_dict() for c in report_clusters(report)]
    how = " (each confirmed alone from its repro.py)" if (st.get("confirm") or {}).get("checked") else ""
    if found:
        eager = (f" and {len(eager_bugs)} eager bug(s) (eager the wrong side, compiled agreeing with the independent "
                 f"referee)") if eager_bugs else ""
        lines.append(f"  FOUND {len(bugs)} compiler-bug candidate(s){eager}{how} in {len(clusters)} distinct root "
                     f"cause(s), listed below")
    else:
        lines.append("  no compiler-bug candidates")
    perf = st.get("perf")
    if perf and perf.get("spread"):
        for row in perf["spread"]:
            lines.append(f"  compiled runtime {row['graph']} {row['backend']}/{row['device']}: {row['programs']} programs, "
                         f"min {row['min_us']:.1f} us, median {row['median_us']:.1f} us, max {row['max_us']:.1f} us "
                         f"(max/min {row['max_over_min']}x; slow-variant at >= {perf['threshold']:g}x, A/B confirmed)")
    lines.append(f"  results: {out / 'results.json'} (verdicts as they came: {out / 'verdicts.jsonl'})")
    first = next((c["repro"] for c in clusters if c.get("repro")), found[0]["repro"] if found else None)
    if first:
        lines.append(f"  next: python {first}   (exits 1 while the bug reproduces)")
    lines += report_table(report)  # the root causes and the notes by kind, one line each
    return "\n".join(lines)

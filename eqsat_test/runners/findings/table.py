"""The short table that ends a run's and a campaign's summary: the root causes (compiler bugs), then the notes by kind, one line each with where to look."""
from __future__ import annotations

from eqsat_test.runners.findings.clusters import Cluster, report_clusters, yield_line
from eqsat_test.runners.findings.notes import NoteGroup, report_note_groups
from eqsat_test.runners.records import FindingKind

MAX_ROWS = 30  # rows per part; the rest are counted (results.json and the store have all)


def _clip(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def root_cause_table(clusters: list[Cluster], note_groups: list[NoteGroup], indent: str = "  ") -> list[str]:
    """Lines: a header with the counts, one line per root cause (its repro at the end), one per note group."""
    eager = sum(1 for c in clusters if c.kind == FindingKind.EAGER_BUG)  # eager the wrong side (oracle/referee.py)
    what = f"compiler bugs, and {eager} eager bug(s)" if eager else "compiler bugs"
    lines = [f"{indent}root causes ({what}): {len(clusters)} distinct"
             + (f"; {yield_line(clusters)}" if clusters else "")]
    for i, c in enumerate(clusters[:MAX_ROWS], 1):
        where = f" | repro: {c.repro}" if c.repro else ""
        lines.append(f"{indent}  {i:>2}. {c.line()}{where}")
    if len(clusters) > MAX_ROWS:
        lines.append(f"{indent}  ... and {len(clusters) - MAX_ROWS} more")
    if note_groups:
        by: dict[str, list[NoteGroup]] = {}
        for g in note_groups:
            by.setdefault(g.kind, []).append(g)
        lines.append(f"{indent}notes (not compiler bugs), by kind: " + ", ".join(
            f"{k} {sum(g.count for g in gs)} in {len(gs)} cause(s)" for k, gs in by.items()))
        several = len({g.model for g in note_groups}) > 1  # a campaign's: say whose
        for g in note_groups[:MAX_ROWS]:
            where = f" | {g.path}" if g.path else ""
            example = f"; e.g. {_clip(g.examples[0], 100)}" if g.examples else ""
            whose = f"{g.model.replace(chr(92), '/').rsplit('/', 1)[-1]}: " if several else ""
            lines.append(f"{indent}  - {whose}{g.line()}{example}{where}")
        if len(note_groups) > MAX_ROWS:
            lines.append(f"{indent}  ... and {len(note_groups) - MAX_ROWS} more")
    return lines


def report_table(report: dict, indent: str = "  ") -> list[str]:
    """root_cause_table of a run's report dict (results.json's "report", --json's object)."""
    return root_cause_table(report_clusters(report), report_note_groups(report), indent)

"""Per-rule statistics of a run or campaign folder: how often each rule fired, in how many findings."""
from __future__ import annotations

import json
from pathlib import Path

from eqsat_test.lowering.manifest import load_manifest
from eqsat_test.runners.records import FindingKind


def _reports(folder: Path):
    """(manifest, report) pairs for every run under `folder` (a run folder or a campaign folder)."""
    for rep in sorted(folder.rglob("report.json")):
        if (rep.parent / "bundle" / "manifest.json").is_file():
            yield load_manifest(rep.parent / "bundle"), json.loads(rep.read_text())


def rule_stats(folder: str | Path) -> list[dict]:
    rows: dict[str, dict] = {}

    def row(name: str) -> dict:
        return rows.setdefault(name, {"rule": name, "fired": 0, "variants": 0, "findings": 0, "unsound": 0})

    found = False
    for manifest, report in _reports(Path(folder)):
        found = True
        for name in manifest.rules.names:
            row(name)
        for name, n in manifest.rules.fired.items():
            row(name)["fired"] += n
        for v in manifest.variants:
            for name in v.rules:
                row(name)["variants"] += 1
        for f in report["findings"]:
            for name in f.get("rules", []):
                row(name)["unsound" if f["kind"] == FindingKind.UNSOUND_REWRITE else "findings"] += (
                    1 if f["kind"] == FindingKind.UNSOUND_REWRITE else f.get("count", 1) if f.get("repro") else 0)
    if not found:
        raise FileNotFoundError(f"{folder}: no run results (report.json beside bundle/manifest.json) found")
    return sorted(rows.values(), key=lambda r: (-r["findings"], -r["fired"], r["rule"]))

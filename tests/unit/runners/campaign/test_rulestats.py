"""`rules stats` (runners/campaign/rulestats.py) names rules by their names, never by egglog's rule text."""
from __future__ import annotations

import json
from pathlib import Path

from eqsat_test.rewrite.generate import GenerateOptions, generate
from eqsat_test.rewrite.saturate import STOP_REASONS
from eqsat_test.runners.campaign.rulestats import rule_stats

MODELS = Path(__file__).resolve().parents[3] / "models"


def test_rule_stats_rows_are_rule_names(tmp_path):
    run = tmp_path / "run"
    manifest = generate(MODELS / "relu_mlp.py", run / "bundle", GenerateOptions(variants=4))
    names = set(manifest.rules.names)
    sat = manifest.graphs[0].saturation
    assert sat is not None and sat.stop in STOP_REASONS.values()  # in words for the console
    fired = manifest.rules.fired
    assert fired and set(fired) <= names, sorted(set(fired) - names)[:3]
    credited = {r for v in manifest.variants for r in v.rules}
    assert credited and credited <= names
    # one unsound-rewrite note and one compiler-bug finding, as report.json holds them
    some = sorted(credited)[0]
    (run / "report.json").write_text(json.dumps({"findings": [
        {"kind": "unsound-rewrite", "rules": [some]},
        {"kind": "miscompile", "rules": [some], "count": 2, "repro": "x/repro.py"}]}))
    rows = rule_stats(run)
    assert rows and all(not r["rule"].startswith("(") and r["rule"] in names for r in rows)
    row = next(r for r in rows if r["rule"] == some)
    assert (row["unsound"], row["findings"]) == (1, 2) and row["variants"] >= 1
    assert sum(r["fired"] for r in rows) == sum(fired.values())

"""End-to-end: --coverage (the compiler lines each task reaches) and --mode guided (variants drawn as results come)."""
from __future__ import annotations

import json

from conftest import TEST_MODELS

RULES = TEST_MODELS / "e2e_rules"
CHEAP = ["--jobs", "2", "--timeout", "240", "-r", str(RULES), "--no-sweep", "--no-artifacts", "--json"]


def test_coverage_run_reports_seed_lines_and_what_each_variant_adds(eqsat, tmp_path):
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "3", "--coverage", *CHEAP, "--out", tmp_path / "out")
    assert res.rc == 0, res.stderr[-3000:]
    cov = res.json["stats"]["compiler_lines"]
    s = cov["summary"]["inductor/cpu"]
    assert s["seed_lines"] > 3000 and s["variants_measured"] == res.json["variants"]
    assert set(cov["tasks"]) == {f"{v}@inductor@cpu" for v in ["g0_seed"] + [f"g0_v{k:03d}" for k in
                                                                             range(1, res.json["variants"] + 1)]}
    assert cov["tasks"]["g0_seed@inductor@cpu"]["new_vs_seed"] == 0
    assert res.json["stats"]["batch"] is None  # one variant per compile: lines per variant
    files = list((tmp_path / "out" / "compiler_lines").glob("*.json"))
    assert len(files) == res.json["executed"]
    assert all(json.loads(f.read_text())["lines"] for f in files)


def test_guided_run_draws_the_rest_of_its_variants_from_feedback(eqsat, tmp_path):
    memory = tmp_path / "memory.json"
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "8", "--mode", "guided", "--guide-memory", memory, *CHEAP,
                "--out", tmp_path / "out", "--allow-unsound-rules")  # CHEAP's rules, the bare-variable one too: 8 variants
    assert res.rc == 0, res.stderr[-3000:]
    report = res.json
    assert report["variants"] == 8 and report["executed"] == 9
    guided = report["stats"]["guided"]
    assert guided["variants_drawn"] >= 4 and len(guided["gains"]) == 8
    manifest = json.loads((tmp_path / "out" / "bundle" / "manifest.json").read_text())
    modes = [v["mode"] for v in manifest["variants"] if not v["seed"]]
    assert len(modes) == 8 and sum(m.startswith("guided-") for m in modes) == 4  # a first round of 4 (initial_count)
    assert json.loads(memory.read_text())["rules"]  # the run's credit, kept for the next


def test_generate_alone_refuses_guided(eqsat, tmp_path):
    res = eqsat("generate", TEST_MODELS / "relu_mlp.py", "--mode", "guided", "--out", tmp_path / "b")
    assert res.rc == 4 and "eqsat-test run" in res.stderr

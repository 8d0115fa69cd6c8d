"""Typed finding records (runners/records.py): the one constructor of findings and notes, and the
round trip of the dicts it makes (as results.json holds them) through `Finding`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import TEST_MODELS
from runners.pipeline import judge_results
from runners.records import COMPILER_BUG_KINDS, Finding, FindingKind, new_finding

BASE = {"variant": "g0_v1", "graph": "g0", "backend": "inductor", "device": "cpu", "rules": ["r1"],
        "mode": "uniform", "ops": ["aten.relu"], "seed": False}


def _round_trips(d: dict) -> None:
    rec = Finding.from_dict(d)
    assert rec.to_dict() == d and list(rec.to_dict()) == list(d)
    assert FindingKind.parse(rec.kind).value == d["kind"]
    assert rec.compiler_bug == (d["kind"] in COMPILER_BUG_KINDS)


def test_new_finding_keeps_the_dict_literal_shape():
    """Parts first, then "kind", then the fields; a field a part has keeps the part's position."""
    f = new_finding(FindingKind.MISCOMPILE, BASE, input_set="random", detail="x")
    assert f == {**BASE, "kind": "miscompile", "input_set": "random", "detail": "x"}
    assert list(f) == list({**BASE, "kind": "miscompile", "input_set": "random", "detail": "x"})
    assert type(f["kind"]) is str  # json.dumps writes it as before
    g = new_finding(FindingKind.CONFIG_MISMATCH, BASE, {"failing_inputs": None}, backend="inductor+x")
    assert list(g) == list({**BASE, "failing_inputs": None, "kind": "config-mismatch", "backend": "inductor+x"})
    assert g["backend"] == "inductor+x"
    n = new_finding(FindingKind.SLOW_VARIANT, variant="v", backend="b", device="cpu")
    assert list(n) == ["kind", "variant", "backend", "device"]
    for d in (f, g, n):
        _round_trips(d)


def test_unknown_kind_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown finding kind 'miscompiled'.*known kinds:.*seed-miscompile"):
        new_finding("miscompiled", BASE)
    with pytest.raises(ValueError, match="unknown finding kind"):
        FindingKind.parse("process-crash")
    with pytest.raises(ValueError, match="unknown finding kind None"):
        new_finding(None, BASE)
    # a known kind as a plain string is refused too: creation sites name a FindingKind member
    with pytest.raises(TypeError, match=r"plain string.*FindingKind\.parse"):
        new_finding("miscompile", BASE)
    assert FindingKind.parse("run-crash") is FindingKind.RUN_CRASH


def test_judged_findings_and_notes_round_trip(tmp_path):
    """judge_results' findings and notes of every status: made by new_finding, read back by Finding."""
    variants = [{"id": f"g0_v{i}", "graph": "g0", "seed": i == 0, "rules": [] if i == 0 else [f"r{i}"],
                 "mode": "uniform"} for i in range(6)]
    manifest = {"variants": variants, "graphs": [{"id": "g0", "op_names": ["aten.relu"]}], "rules": {}}
    err = {"type": "RuntimeError", "message": "boom"}
    base = {"backend": "inductor", "device": "cpu"}
    results = [
        {**base, "variant": "g0_v0", "status": "ok", "input_sets": [
            {"name": "random", "kind": "mismatch", "ok": False, "max_abs_err": 1.0, "max_rel_err": 0.5,
             "detail": "off", "leaf": 0}]},
        {**base, "variant": "g0_v1", "status": "compile-crash", "error": err},
        {**base, "variant": "g0_v2", "status": "process-crash", "error": err},
        {**base, "variant": "g0_v3", "status": "eager-error", "error": err},
        {**base, "variant": "g0_v4", "status": "internal-error", "error": err},
        {**base, "variant": "g0_v5", "status": "ok", "input_sets": [
            {"name": "random", "kind": "nondeterministic", "ok": True, "detail": "two eager runs differ"}]},
    ]
    findings, notes = judge_results(manifest, results, tmp_path, "inductor")
    assert [f["kind"] for f in findings] == ["seed-miscompile", "compile-crash", "run-crash"]
    assert [n["kind"] for n in notes] == ["unsound-rewrite", "internal-error", "nondeterministic"]
    for d in findings + notes:
        _round_trips(json.loads(json.dumps(d)))


@pytest.mark.slow  # a real run of the command line (injected Inductor bug): about a minute
def test_real_run_results_json_findings_round_trip(eqsat, tmp_path):
    out = tmp_path / "out"
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "2", "--jobs", "1", "-r", TEST_MODELS / "e2e_rules",
                "--no-sweep", "--no-artifacts", "--no-minimize", "--json",
                "-b", 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"', "--out", out, timeout=600)
    assert res.rc == 1, res.stderr[-3000:]
    report = json.loads(Path(out / "results.json").read_text())["report"]
    assert report["findings"] and any(f["kind"] in COMPILER_BUG_KINDS for f in report["findings"])
    for d in report["findings"]:
        _round_trips(d)

"""Everything a program does is judged: the inputs it writes (real compiler bugs in how writes are compiled, and a
backend that drops writes), a model without inputs, a model torch.compile cannot capture, and a compiled program
that does not give the same answer twice. Each through the real command line (several models to a run, as
`eqsat-test run A.py B.py` runs them: each its own OUT/<model>/report.json), its repro.py run alone."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO, TEST_MODELS

SEM = TEST_MODELS / "semantics"
FAULTS = REPO / "examples" / "backends" / "faulty_backends.py"
CHEAP = ["-n", "2", "--jobs", "1", "--no-sweep", "--no-artifacts", "--json"]


def _bugs(report: dict) -> list[dict]:
    from eqsat_test.runners.records import BUG_KINDS
    return [f for f in report["findings"] if f["kind"] in BUG_KINDS]


def _repro_exits_1(finding: dict, verdict: str) -> None:
    p = subprocess.run([sys.executable, finding["repro"]], capture_output=True, text=True, timeout=600,
                       cwd=Path(finding["repro"]).parent)
    assert p.returncode == 1 and f"VERDICT: {verdict}" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]


def _reports(eqsat, out: Path, models: list[str], *options) -> tuple[int, dict[str, dict]]:
    """One run of several model files of tests/models/semantics (or paths): its exit code and each model's report."""
    paths = [m if "/" in m else str(SEM / f"{m}.py") for m in models]
    one = out / Path(paths[0]).stem  # one model's output folder is OUT itself
    res = eqsat("run", *paths, *CHEAP, *options, "--out", one if len(paths) == 1 else out)
    reports = {}
    for m in paths:
        f = out / Path(m).stem / "report.json"
        assert f.is_file(), f"{m}: no report\n{res.stderr[-3000:]}"
        reports[Path(m).stem] = json.loads(f.read_text())
    return res.rc, reports


def test_compiler_bugs_in_how_inputs_are_written_a_model_without_inputs_and_one_dynamo_cannot_capture(eqsat, tmp_path):
    """The captured program, in-place ops and all, is the seed: Inductor compiles the writes, and the input's value
    after the call is judged like an output (both programs return only a value computed before or from it). A model
    whose forward takes no inputs runs (and is clean); one that eager runs and Dynamo cannot capture is a
    capture-crash with a repro."""
    rc, rep = _reports(eqsat, tmp_path / "out", ["writes_put_flip", "writes_foreach_flip", "no_inputs", "uncapturable"])
    assert rc == 1
    for model in ("writes_put_flip", "writes_foreach_flip"):
        bugs = _bugs(rep[model])
        assert bugs and bugs[0]["kind"] == "seed-miscompile" and bugs[0]["confirmed"], bugs
        assert any(f.get("written_input") == "l_x_" for f in bugs), bugs
        assert rep[model]["stats"]["internal_errors"] == 0
        _repro_exits_1(bugs[0], "MISCOMPILE")
    assert rep["no_inputs"]["executed"] >= 1 and not _bugs(rep["no_inputs"]), rep["no_inputs"]["findings"]
    (f,) = rep["uncapturable"]["findings"]
    assert f["kind"] == "capture-crash" and f["confirmed"] and "TorchRuntimeError" in f["detail"], f
    assert rep["uncapturable"]["clusters"] and rep["uncapturable"]["clusters"][0]["kind"] == "capture-crash"
    _repro_exits_1(f, "CRASH")


def test_a_lost_write_is_flagged_and_the_identity_backend_is_not(eqsat, tmp_path):
    models = {"writes_copy_then_update": "l_dst_", "writes_int32_view": "l_x_"}
    rc, lost = _reports(eqsat, tmp_path / "lost", list(models), "--backend", f"{FAULTS}:writes_lost")
    assert rc == 1
    for model, written in models.items():
        bugs = _bugs(lost[model])
        assert bugs and bugs[0].get("written_input") == written and bugs[0]["confirmed"], bugs
        _repro_exits_1(bugs[0], "MISCOMPILE")
    rc, clean = _reports(eqsat, tmp_path / "clean", list(models), "--backend", f"{FAULTS}:identity")
    assert rc == 0, clean
    for model in models:
        kinds = {f["kind"] for f in clean[model]["findings"]}
        assert not kinds & {"unsound-rewrite", "internal-error", "emit-error"}, clean[model]["findings"]


def test_faults_in_a_model_without_inputs_and_a_backend_that_returns_the_previous_calls_outputs_are_caught(
        eqsat, tmp_path):
    """A wrong element in what a model without inputs computes is found. Two calls of one compiled program on the
    same inputs differ (the first returns the call before's outputs): compiled-nondeterministic, confirmed alone by
    a repro that makes the calls before first."""
    rc, faulty = _reports(eqsat, tmp_path / "f", ["no_inputs"], "--backend", f"{FAULTS}:one_wrong_element")
    assert rc == 1 and _bugs(faulty["no_inputs"])[0]["confirmed"], faulty["no_inputs"]["findings"]
    rc, stale = _reports(eqsat, tmp_path / "out", [str(REPO / "benchmarks" / "fault_seeds" / "multi_out.py")],
                         "--backend", f"{FAULTS}:stale_outputs")
    assert rc == 1
    bugs = _bugs(stale["multi_out"])
    assert bugs and bugs[0]["kind"] == "compiled-nondeterministic" and bugs[0]["confirmed"], bugs
    _repro_exits_1(bugs[0], "COMPILED-NONDETERMINISTIC")

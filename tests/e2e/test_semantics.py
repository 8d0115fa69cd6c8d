"""Everything a program does is judged: the inputs it writes (real compiler bugs in how writes are compiled, and a
backend that drops writes), a model without inputs, a model torch.compile cannot capture, and a compiled program
that does not give the same answer twice. Each through the real command line, its repro.py run alone."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
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


@pytest.mark.parametrize("model,written", [("writes_put_flip", "l_x_"), ("writes_foreach_flip", "l_x_")])
def test_a_compiler_bug_in_how_inputs_are_written_is_found_on_the_written_input(eqsat, tmp_path, model, written):
    """The captured program, in-place ops and all, is the seed: Inductor compiles the writes, and the input's value
    after the call is judged like an output (both programs return only a value computed before or from it)."""
    res = eqsat(SEM / f"{model}.py", *CHEAP, "--out", tmp_path / "out")
    assert res.rc == 1, res.stderr[-3000:]
    bugs = _bugs(res.json)
    assert bugs and bugs[0]["kind"] == "seed-miscompile" and bugs[0]["confirmed"], bugs
    assert any(f.get("written_input") == written for f in bugs), bugs
    assert res.json["stats"]["internal_errors"] == 0
    _repro_exits_1(bugs[0], "MISCOMPILE")


@pytest.mark.parametrize("model,written", [("writes_copy_then_update", "l_dst_"), ("writes_int32_view", "l_x_")])
def test_a_lost_write_is_flagged_and_the_identity_backend_is_not(eqsat, tmp_path, model, written):
    lost = eqsat(SEM / f"{model}.py", *CHEAP, "--backend", f"{FAULTS}:writes_lost", "--out", tmp_path / "lost")
    assert lost.rc == 1, lost.stderr[-3000:]
    bugs = _bugs(lost.json)
    assert bugs and bugs[0].get("written_input") == written and bugs[0]["confirmed"], bugs
    _repro_exits_1(bugs[0], "MISCOMPILE")
    clean = eqsat(SEM / f"{model}.py", *CHEAP, "--backend", f"{FAULTS}:identity", "--out", tmp_path / "clean")
    assert clean.rc == 0, clean.stderr[-3000:]
    kinds = {f["kind"] for f in clean.json["findings"]}
    assert not kinds & {"unsound-rewrite", "internal-error", "emit-error"}, clean.json["findings"]


def test_a_model_without_inputs_runs_and_a_fault_in_it_is_found(eqsat, tmp_path):
    clean = eqsat(SEM / "no_inputs.py", *CHEAP, "--out", tmp_path / "clean")
    assert clean.rc == 0 and clean.json["executed"] >= 1, clean.stderr[-3000:]
    faulty = eqsat(SEM / "no_inputs.py", *CHEAP, "--backend", f"{FAULTS}:one_wrong_element", "--out", tmp_path / "f")
    assert faulty.rc == 1 and _bugs(faulty.json)[0]["confirmed"], faulty.stderr[-3000:]


def test_a_model_torch_compile_cannot_capture_is_a_capture_crash_with_a_repro(eqsat, tmp_path):
    res = eqsat(SEM / "uncapturable.py", *CHEAP, "--out", tmp_path / "out")
    assert res.rc == 1, res.stderr[-3000:]
    (f,) = res.json["findings"]
    assert f["kind"] == "capture-crash" and f["confirmed"] and "TorchRuntimeError" in f["detail"], f
    assert res.json["clusters"] and res.json["clusters"][0]["kind"] == "capture-crash"
    _repro_exits_1(f, "CRASH")


def test_a_backend_that_returns_the_previous_calls_outputs_is_caught(eqsat, tmp_path):
    """Two calls of one compiled program on the same inputs differ (the first returns the call before's outputs):
    compiled-nondeterministic, confirmed alone by a repro that makes the calls before first."""
    res = eqsat(REPO / "benchmarks" / "fault_seeds" / "multi_out.py", *CHEAP, "--backend",
                f"{FAULTS}:stale_outputs", "--out", tmp_path / "out")
    assert res.rc == 1, res.stderr[-3000:]
    bugs = _bugs(res.json)
    assert bugs and bugs[0]["kind"] == "compiled-nondeterministic" and bugs[0]["confirmed"], bugs
    _repro_exits_1(bugs[0], "COMPILED-NONDETERMINISTIC")

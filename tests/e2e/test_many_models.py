"""`eqsat-test run A.py B.py`: several model files in one process, each with its own output folder and report."""
from __future__ import annotations

import json

from conftest import REPO, TEST_MODELS

CHEAP = ["-n", "2", "--jobs", "1", "--no-sweep", "--inputs", "given", "-r", str(TEST_MODELS / "e2e_rules"), "--json"]


def test_two_models_in_one_run_each_get_their_folder_and_report(eqsat, tmp_path):
    models = [TEST_MODELS / "relu_mlp.py", REPO / "benchmarks" / "fault_seeds" / "row_sum.py"]
    res = eqsat("run", *models, *CHEAP, "--out", tmp_path / "out", timeout=900)
    assert res.rc == 0, res.stderr[-3000:]
    reports = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert [r["model"] for r in reports] == [str(m) for m in models]
    for m, r in zip(models, reports):
        out = tmp_path / "out" / m.stem
        assert (out / "results.json").is_file() and r["stats"]["tasks_done"] == r["stats"]["tasks"] >= 2
    assert "2 models: relu_mlp.py exit 0, row_sum.py exit 0" in res.stderr
    assert res.stderr.count("spare worker") == 0


def test_several_model_files_of_one_name_are_refused(eqsat, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "relu_mlp.py").write_text((TEST_MODELS / "relu_mlp.py").read_text())
    res = eqsat("run", TEST_MODELS / "relu_mlp.py", tmp_path / "a" / "relu_mlp.py", *CHEAP)
    assert res.rc == 4 and "same name" in res.stderr and "Traceback" not in res.stderr

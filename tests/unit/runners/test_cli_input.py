"""Bad input is refused before any work, in one line with exit code 4; options may come before the model file."""
from __future__ import annotations

import json
import time

import pytest
from conftest import REPO, TEST_MODELS

MODEL = REPO / "examples" / "mlp.py"


def _one_line_usage_error(res) -> None:
    assert res.rc == 4, (res.rc, res.stderr[-2000:])
    assert "Traceback" not in res.stderr
    assert res.stdout == ""


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_variants_must_be_at_least_one(eqsat):
    for n in ("0", "-3"):
        res = eqsat(MODEL, "-n", n, "--no-sweep")
        _one_line_usage_error(res)
        assert "--variants" in res.stderr


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_unknown_backend_is_refused_before_generating(eqsat, tmp_path):
    t0 = time.monotonic()
    res = eqsat(MODEL, "--backend", "nosuchbackend", "--out", tmp_path / "out")
    _one_line_usage_error(res)
    assert "unknown backend 'nosuchbackend'" in res.stderr
    assert not (tmp_path / "out" / "bundle").exists(), "nothing is generated for a bad backend"
    assert time.monotonic() - t0 < 120


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_unknown_inductor_config_and_unloadable_backend_file(eqsat, tmp_path):
    res = eqsat(MODEL, "--backend", "inductor+no_such_config=1")
    _one_line_usage_error(res)
    assert "no Inductor config named no_such_config" in res.stderr
    res = eqsat(MODEL, "--backend", f"{tmp_path / 'missing.py'}:fn")
    _one_line_usage_error(res)
    assert "cannot load it" in res.stderr


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_options_before_the_model_file(eqsat):
    res = eqsat("-n", "0", MODEL)  # parsed as `run` (the -n is then refused, not "No such option")
    _one_line_usage_error(res)
    assert "No such option" not in res.stderr and "--variants" in res.stderr


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_a_wrong_user_rule_is_left_out_and_said_so_in_full(eqsat, tmp_path):
    rules = tmp_path / "wrong_rules.py"
    rules.write_text(
        "import torch\nfrom eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule\n\n\n"
        "@rule(family='algebra', numerics='exact')\n"
        "def times_two_is_three_adds(x: Tensor(dtype=FLOATING)):\n"
        "    return x * 2, x + x + x\n\n\n"
        "@rule(family='algebra', numerics='exact')\n"
        "def add_self_is_times_two(x: Tensor(dtype=FLOATING)):\n"
        "    return x + x, x * 2\n")
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "2", "-r", rules, "--no-sweep", "--inputs", "given", "--jobs", "1",
                "--no-artifacts", "--out", tmp_path / "run")
    assert res.rc == 0, res.stderr[-2000:]
    assert "WARNING: rule times_two_is_three_adds claims exact but fails a quick check; left out" in res.stderr
    warning = res.stderr[res.stderr.index("WARNING"):].splitlines()
    assert any("positions differ" in ln for ln in warning[:14]), "the counterexample is shown whole"
    assert all(len(ln) < 400 for ln in warning[:14])
    assert "rules left out: times_two_is_three_adds" in res.stdout  # the summary repeats it
    manifest = json.loads((tmp_path / "run" / "bundle" / "manifest.json").read_text())
    assert manifest["rules"]["names"] == ["add_self_is_times_two"]
    assert "times_two_is_three_adds" in manifest["rules"]["left_out"]
    res = eqsat("generate", TEST_MODELS / "relu_mlp.py", "-n", "2", "-r", rules, "--allow-unsound-rules",
                "--out", tmp_path / "b")
    assert res.rc == 0, res.stderr[-2000:]
    assert "used anyway (--allow-unsound-rules)" in res.stderr
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert "times_two_is_three_adds" in manifest["rules"]["names"] and not manifest["rules"]["left_out"]


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_rules_coverage_lists_ops_and_variants(eqsat):
    res = eqsat("rules", "coverage", REPO / "benchmarks" / "corpus" / "norm_layer_norm.py", "-n", "4", "--json")
    assert res.rc == 0, res.stderr[-2000:]
    (row,) = res.json
    (g,) = row["graphs"]
    assert any(op.endswith("layer_norm") for op in g["ops"]) and g["distinct_variants"] >= 1


def test_artifacts_of_a_folder_that_holds_no_finding_is_one_line(eqsat, tmp_path):
    """`eqsat-test artifacts DIR`: a folder that is neither a finding's nor a run's is refused in one line."""
    res = eqsat("artifacts", tmp_path)
    _one_line_usage_error(res)
    assert "neither a finding folder" in res.stderr
    (tmp_path / "findings" / "001-miscompile-g0_v001").mkdir(parents=True)
    (tmp_path / "findings" / "001-miscompile-g0_v001" / "meta.json").write_text("{}")
    res = eqsat("artifacts", tmp_path / "findings" / "001-miscompile-g0_v001")
    _one_line_usage_error(res)
    assert "not a finding folder (no meta.json and repro.py)" in res.stderr

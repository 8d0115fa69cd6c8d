"""Configuration divergence (runners/checks/configs.py): the named configurations exist in this torch, `--configs` parsing, the cross-configuration judge on synthetic verdicts (both directions, all-wrong, sweep points), and end to end: the default compile and a configuration with Inductor's injected accuracy bug disagree on the same programs, and the finding names that configuration.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TEST_MODELS, warm_server

from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.checks.configs import (
    CONFIGS,
    DEFAULT_SET,
    ConfigError,
    backend_spec,
    config_exists,
    config_judge,
    configured_backends,
    parse,
)
from eqsat_test.runners.protocol import compile_options
from eqsat_test.runners.records import Result, as_finding

INJECT = 'cpp.inject_relu_bug_TESTING_ONLY="accuracy"'


def test_every_named_configuration_exists_in_this_torch():
    for name, overrides in CONFIGS.items():
        for key in overrides:
            assert config_exists(key), f"{name}: torch._inductor.config has no {key}"
    assert set(DEFAULT_SET) <= set(CONFIGS)


def test_parse_and_backend_specs():
    got = parse("default")
    assert list(got) == list(DEFAULT_SET)
    got = parse(f'no-vectorize,{INJECT},epilogue_fusion=false;max_fusion_size=8')
    assert got["no-vectorize"] == {"cpp.simdlen": 1}
    assert got[INJECT] == {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}
    assert got["epilogue_fusion=false;max_fusion_size=8"] == {"epilogue_fusion": False, "max_fusion_size": 8}
    with pytest.raises(ConfigError, match="unknown configuration"):
        parse("no-such-thing")
    with pytest.raises(ConfigError, match="not in torch._inductor.config"):
        parse("not_a_real_inductor_knob=1")
    specs = configured_backends("inductor", {"no-vectorize": {"cpp.simdlen": 1}})
    assert specs == {"inductor+cpp.simdlen=1": "no-vectorize"}
    # appended to a base that has overrides already, and round-trips through the worker's parser
    spec = backend_spec('inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"', {"epilogue_fusion": False})
    assert compile_options(spec) == ("inductor", {"options": {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy",
                                                              "epilogue_fusion": False}})
    with pytest.raises(ConfigError):
        configured_backends("eager", {"no-vectorize": {"cpp.simdlen": 1}})


def _manifest() -> Manifest:
    return Manifest(graphs=(Graph("g0", op_names=("torch.relu",)),),
                    variants=(Variant("v", "g0", "v.py", rules=("r",), mode="uniform"),))


def _r(backend, ok, name="given"):
    s = {"name": name, "ok": ok, "kind": "match" if ok else "mismatch", "max_abs_err": 0.0 if ok else 1.0,
         "detail": "ok" if ok else "[0] float32[4]: bad", "inputs_file": None if ok else f"/x/{backend}.pt"}
    return Result.from_dict({"variant": "v", "device": "cpu", "backend": backend, "status": "ok", "input_sets": [s]})


def _f(backend, input_set="given", **kw):
    return as_finding({"kind": "miscompile", "variant": "v", "device": "cpu", "backend": backend, "input_set": input_set,
                       "min_ops": ["torch.relu"], "minimized_file": f"/m/{backend}.py", **kw})


B, C1, C2 = "inductor", "inductor+epilogue_fusion=false", "inductor+cpp.simdlen=1"
BACKENDS = {C1: "no-epilogue-fusion", C2: "no-vectorize"}


def test_judge_exposed_by_config():
    out = config_judge(_manifest(), [_r(B, True), _r(C1, False), _r(C2, True)], [_f(C1)], B, BACKENDS, CONFIGS)
    (f,) = out
    assert (f.kind, f.config, f.direction, f.backend) == ("config-mismatch", "no-epilogue-fusion", "exposed-by-config", C1)
    assert f.configs_right == [B, "no-vectorize"] and f.configs_wrong == ["no-epilogue-fusion"]
    assert f.minimized_file == f"/m/{C1}.py"  # the minimized failing program is carried over


def test_judge_hidden_by_config():
    out = config_judge(_manifest(), [_r(B, False), _r(C1, True), _r(C2, False)], [_f(B), _f(C2)], B, BACKENDS, CONFIGS)
    (f,) = out
    assert (f.kind, f.config, f.direction, f.backend) == ("config-mismatch", "no-epilogue-fusion", "hidden-by-config", B)
    assert f.configs_right == ["no-epilogue-fusion"] and f.configs_wrong == [B, "no-vectorize"]
    assert "right under no-epilogue-fusion" in f.detail


def test_judge_wrong_everywhere_is_one_finding_not_config_dependent():
    out = config_judge(_manifest(), [_r(B, False), _r(C1, False), _r(C2, False)],
                       [_f(B), _f(C1), _f(C2), _f(C2, input_set="sweep-x"), _f(B, input_set="sweep-x")], B, BACKENDS, CONFIGS)
    assert [(f.backend, f.input_set) for f in out] == [(B, "given"), (B, "sweep-x")]
    assert out[0].config_dependent is False and out[0].configs_also_wrong == ["no-epilogue-fusion", "no-vectorize"]
    assert out[1].configs_also_wrong == ["no-vectorize"]


def test_judge_keeps_crashes_and_names_their_config():
    crash = as_finding({"kind": "compile-crash", "variant": "v", "device": "cpu", "backend": C2})
    r = Result.from_dict({"variant": "v", "device": "cpu", "backend": C2, "status": "compile-crash", "input_sets": []})
    out = config_judge(_manifest(), [_r(B, True), _r(C1, True), r], [crash], B, BACKENDS, CONFIGS)
    assert [(f.kind, f.backend, f.config) for f in out] == [("compile-crash", C2, "no-vectorize")]
    assert crash.config is None  # a new record, the input unchanged


@pytest.fixture(scope="module")
def run(eqsat, tmp_path_factory):
    out = tmp_path_factory.mktemp("configs") / "out"
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "1", "-r", TEST_MODELS / "e2e_rules", "--no-sweep", "--inputs", "given",
                "--no-artifacts", "--jobs", "1", "--configs", f"{INJECT},no-vectorize", "--json", "--out", out, timeout=900)
    return res, out


def test_two_configurations_disagree_and_the_flipping_config_is_named(run):
    res, out = run
    assert res.rc == 1, res.stderr[-3000:]
    rep = res.json
    assert rep["stats"]["backends"] == ["inductor", f"inductor+{INJECT}", "inductor+cpp.simdlen=1"]
    bugs = [f for f in rep["findings"] if f.get("repro")]
    assert bugs and {f["kind"] for f in bugs} == {"config-mismatch"}, [(f["kind"], f["backend"]) for f in bugs]
    for f in bugs:
        assert f["config"] == INJECT and f["direction"] == "exposed-by-config" and f["backend"] == f"inductor+{INJECT}"
        assert f["configs_right"] == ["inductor", "no-vectorize"] and f["configs_wrong"] == [INJECT]
        assert f["triage"] == "accuracy" and f["triage_info"]["subclass"] == "config-dependent"
        assert INJECT.replace('"', "'").split("=")[0] in f["detail"]
    # the repro compiles under the flipping configuration and still fails
    d = Path(bugs[0]["repro"]).parent
    assert "_inductor_config.cpp.inject_relu_bug_TESTING_ONLY = \"accuracy\"" in (d / "repro.py").read_text()
    p = warm_server().run(["repro.py"], cli=False, cwd=d, timeout=300)
    assert p.returncode == 1 and "VERDICT: MISCOMPILE" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    meta = json.loads((d / "meta.json").read_text())
    assert meta["config_overrides"] == {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}
    # --no-artifacts: the regression test is written, no debug rerun
    assert (d / "test_repro.py").is_file() and not (d / "output_code.py").exists() and "debug_artifacts" not in meta

"""Finding artifacts end to end (real torch.compile on CPU, the real CLI): Inductor's injected C++ compile error and its injected accuracy bug each get the right triage class, the debug rerun's files (output code, post-AOT FX graph, failing C++ source), the after-AOT minifier's repro, the compiler bisector's verdict, and a test_repro.py that fails on this torch (and passes once the bug is gone).

One run makes both findings (two backends, the seed and one variant, not shrunk by eqsat-test first:
PyTorch's minifier does it here); the run collects no artifacts and says how in one line; then
`eqsat-test artifacts OUT --max 2` collects them on demand, for the seed's two findings only; the
subprocess checks of the produced files run concurrently.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import TEST_MODELS

RELU_BUG = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="{}"'
RULES = TEST_MODELS / "e2e_rules"
pytestmark = pytest.mark.xdist_group("artifacts")  # a parallel run: one worker makes `run` once for all


@pytest.fixture(scope="module")
def run(eqsat, tmp_path_factory):
    out = tmp_path_factory.mktemp("artifacts") / "out"
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "1", "-r", RULES, "--no-sweep", "--inputs", "given", "--jobs", "1",
                "--no-minimize", "-b", RELU_BUG.format("compile_error"), "-b", RELU_BUG.format("accuracy"),
                "--json", "--out", out, timeout=1500)
    assert res.rc == 1, f"rc={res.rc}\n{res.stdout[-3000:]}\n{res.stderr[-5000:]}"
    report = res.json
    assert f"eqsat-test artifacts {out / 'findings'}" in res.stderr  # not collected on the way: the hint says how
    assert not any((Path(f["repro"]).parent / "output_code.py").exists() for f in report["findings"] if f.get("repro"))
    on_demand = eqsat("artifacts", out, "--max", "2", "--timeout", "300", timeout=1500)
    assert on_demand.rc == 0, on_demand.stderr[-5000:]
    # the seed and its one variant fail on each backend: the seed's findings get the debug rerun
    by_kind = {f["kind"]: f for f in report["findings"] if f.get("repro") and f["variant"] == "g0_seed"}
    assert set(by_kind) == {"compile-crash", "seed-miscompile"}, report["findings"]
    others = [Path(f["repro"]).parent for f in report["findings"] if f.get("repro") and f["variant"] != "g0_seed"]
    assert all("more than 2 findings" in _meta(d)["debug_artifacts"]["skipped"] for d in others), others
    folders = {k: Path(f["repro"]).parent for k, f in by_kind.items()}
    # The produced scripts, run concurrently: both regression tests, the accuracy test with the
    # injected bug switched off (a "fixed" torch), and the minifier's repro.
    fixed = folders["seed-miscompile"] / "test_repro_fixed.py"
    src = (folders["seed-miscompile"] / "test_repro.py").read_text()
    fixed.write_text(src.replace("@inductor_config.patch(", "# @inductor_config.patch("))
    jobs = {"crash_test": (folders["compile-crash"], "test_repro.py"),
            "accuracy_test": (folders["seed-miscompile"], "test_repro.py"),
            "fixed_test": (folders["seed-miscompile"], "test_repro_fixed.py"),
            "minifier_repro": (folders["seed-miscompile"], "minifier_repro.py")}

    def go(item):
        name, (cwd, script) = item
        if not (cwd / script).is_file():
            return name, None
        return name, subprocess.run([sys.executable, script], cwd=cwd, capture_output=True, text=True, timeout=600)

    with ThreadPoolExecutor(max_workers=2) as ex:
        runs = dict(ex.map(go, jobs.items()))
    return report, by_kind, folders, runs


def _meta(folder: Path) -> dict:
    return json.loads((folder / "meta.json").read_text())


def test_triage_classes(run):
    report, by_kind, folders, _ = run
    crash, acc = by_kind["compile-crash"], by_kind["seed-miscompile"]
    assert crash["triage"] == "backend-compile-error" and crash["triage_info"]["subclass"] == "cpp-compile-error"
    assert crash["triage_info"]["component"] == "inductor" and "oncall: pt2" in crash["triage_info"]["labels"]
    assert acc["triage"] == "accuracy" and acc["triage_info"]["stage"] == "output"
    for k, d in folders.items():
        assert _meta(d)["triage"] == by_kind[k]["triage"]
    n = {c: sum(1 for f in report["findings"] if f.get("repro") and f["triage"] == c) for c in report["stats"]["triage"]}
    assert report["stats"]["triage"] == n and set(n) == {"accuracy", "backend-compile-error"}


def test_debug_rerun_keeps_the_generated_code_and_the_fx_graph(run):
    _, _, folders, _ = run
    acc = folders["seed-miscompile"]
    code = (acc / "output_code.py").read_text()
    assert "cpp_fused" in code and "async_compile" in code, code[:2000]  # Inductor's C++ kernels and wrapper
    assert "+ decltype(" in code  # the injected relu bug is visible in the kernel source
    graph = (acc / "fx_graph_readable.py").read_text()
    assert "torch.ops.aten.relu" in graph  # post-AOT: aten ops
    assert (acc / "fx_graph_runnable.py").is_file() and (acc / "compile_log.txt").stat().st_size > 0
    crash = folders["compile-crash"]
    kernel = (crash / "failing_kernel.cpp").read_text()
    assert "compile error!" in kernel  # the injected C++ that does not compile
    for d in folders.values():
        art = _meta(d)["debug_artifacts"]
        assert art["debug_run"]["reproduced"] and not art["debug_run"]["timed_out"], art


def test_minifier_result_is_kept_and_reproduces(run):
    _, _, folders, runs = run
    art = _meta(folders["seed-miscompile"])["debug_artifacts"]["minifier"]
    assert art["status"] == "minimized" or art["status"].startswith("timed out after"), art
    text = (folders["seed-miscompile"] / "minifier_repro.py").read_text()
    assert "aten.relu" in text and "TORCH_COMPILE_DEBUG" not in text
    assert art["ops_after"] == 1 and art["ops_before"] >= 5, art  # the relu alone, from addmm, relu, mul, addmm, add
    r = runs["minifier_repro"]
    assert r is not None and r.returncode != 0 and "AccuracyError" in r.stderr, (r.stdout + r.stderr)[-3000:]
    crash_art = _meta(folders["compile-crash"])["debug_artifacts"]["minifier"]
    assert crash_art["status"] in ("minimized", "no smaller graph found") or crash_art["status"].startswith("timed out"), crash_art


def test_bisector_names_the_relu_lowering(run):
    _, _, folders, _ = run
    b = _meta(folders["seed-miscompile"])["debug_artifacts"]["bisect"]
    assert b["status"] == "done" and b["backend"] == "inductor", b
    assert b["subsystem"] == "lowerings" and "relu" in (b.get("debug_info") or ""), b
    assert "relu" in (folders["seed-miscompile"] / "bisect.txt").read_text()
    # crashes carry their traceback: bisected only with --bisect all
    assert _meta(folders["compile-crash"])["debug_artifacts"]["bisect"]["status"] == "off"


def test_regression_tests_fail_on_this_torch(run):
    _, _, folders, runs = run
    for name in ("crash_test", "accuracy_test"):
        r = runs[name]
        assert r is not None, f"{name}: no test_repro.py"
        assert r.returncode != 0 and ("FAILED" in r.stderr or "FAILED" in r.stdout), (r.stdout + r.stderr)[-3000:]
    assert "Tensor-likes are not close" in runs["accuracy_test"].stderr or "Mismatch" in runs["accuracy_test"].stderr
    assert "CppCompileError" in runs["crash_test"].stderr or "C++ compile error" in runs["crash_test"].stderr
    src = (folders["seed-miscompile"] / "test_repro.py").read_text()
    assert "run_tests()" in src and "TestCase" in src and "def forward(" in src
    assert "inductor_config.patch({'cpp.inject_relu_bug_TESTING_ONLY': 'accuracy'})" in src


def test_regression_test_passes_once_the_bug_is_gone(run):
    r = run[3]["fixed_test"]
    assert r.returncode == 0 and "OK" in r.stderr, (r.stdout + r.stderr)[-3000:]


# ---- test_repro.py rendering, without compiling ----

PROGRAM = '''import torch
import operator
from pathlib import Path

DEVICE = torch.device("cpu")


def forward(x, w):
    h = torch.relu(x @ w)
    return (operator.mul(h, 2.0),)
'''


def test_small_inputs_are_inlined_exactly_and_cuda_findings_run_on_cuda(tmp_path):
    import torch

    from eqsat_test.runners.findings.artifacts import INLINE_MAX_NUMEL, test_repro_source
    from eqsat_test.runners.records import as_finding
    x = torch.tensor([[-0.0, float("nan"), float("inf"), 1e-40], [1.5, -2.25, 3.0, 0.1]])
    torch.save([x, torch.ones(4, 2)], tmp_path / "inputs.pt")
    f = as_finding({"kind": "miscompile", "variant": "g0_v001", "rules": ["r1"], "backend": 'inductor+cpp.simdlen=1',
                    "device": "cuda", "detail": "[0] float32[2, 2]: bad"})
    src = test_repro_source(PROGRAM, f, tmp_path / "inputs.pt")
    assert 'DEVICE = "cuda"' in src and '@unittest.skipIf(not torch.cuda.is_available(), "needs cuda")' in src
    assert "@inductor_config.patch({'cpp.simdlen': 1})" in src and "import operator" in src
    assert "INPUTS_FILE" not in src and 16 <= INLINE_MAX_NUMEL
    ns: dict = {}
    exec(compile(src.replace('DEVICE = "cuda"', 'DEVICE = "cpu"'), "test_repro.py", "exec"), ns)
    got = ns["get_inputs"]()
    assert torch.equal(got[0].nan_to_num(), x.nan_to_num()) and torch.isnan(got[0][0, 1])
    assert torch.signbit(got[0][0, 0]) and got[0][0, 3].item() == x[0, 3].item()  # -0.0 and a subnormal, bit-exact
    # big inputs stay in the file beside the test
    torch.save([torch.randn(100)], tmp_path / "inputs.pt")
    src = test_repro_source(PROGRAM, f.with_(device="cpu", backend="inductor"), tmp_path / "inputs.pt")
    assert 'INPUTS_FILE = Path(__file__).with_name("inputs.pt")' in src and "skipIf" not in src
    assert test_repro_source(PROGRAM, f.with_(kind="device-mismatch"), tmp_path / "inputs.pt") is None


# ---- what a finding folder says: the same program and verdict as repro.py, only files that exist ----

def _run_rendered_test(src: str, compile_fn):
    """Run the rendered test class with torch.compile replaced by `compile_fn` (no compile here)."""
    import unittest
    from unittest import mock

    import torch
    ns: dict = {"__name__": "rendered_test_repro"}
    exec(compile(src, "test_repro.py", "exec"), ns)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(ns["TestEqsatRepro"])
    assert suite.countTestCases() == 1
    with mock.patch.object(torch, "compile", compile_fn), open(os.devnull, "w") as devnull:
        return unittest.TextTestRunner(stream=devnull).run(suite)


def test_test_repro_states_the_verdict_of_its_own_program_and_judges_like_repro_py(tmp_path):
    import torch

    from eqsat_test.runners.findings.artifacts import test_repro_source
    from eqsat_test.runners.records import as_finding
    torch.save([torch.randn(2, 3), torch.randn(3, 2)], tmp_path / "inputs.pt")
    base = as_finding({"kind": "miscompile", "variant": "g0_v003", "rules": ["r1"], "backend": "inductor", "device": "cpu",
                       "detail": "[0] float32[2, 2]: FULL VARIANT VERDICT", "min_ops": ["torch.relu"]})
    # not minimized (min_ops set, but nothing smaller failed): the finding's own verdict, no "minimized" claim
    src = test_repro_source(PROGRAM, base, tmp_path / "inputs.pt")
    assert "Verdict: [0] float32[2, 2]: FULL VARIANT VERDICT" in src and "minimized" not in src.split('"""')[1]
    # minimized, its verdict recorded: that one only
    mini = base.with_(minimized_file=str(tmp_path / "minimized.py"), min_detail="[0] float32[2, 2]: MINI VERDICT")
    src = test_repro_source(PROGRAM, mini, tmp_path / "inputs.pt")
    assert "Verdict on this minimized program: [0] float32[2, 2]: MINI VERDICT" in src
    assert "FULL VARIANT VERDICT" not in src and "minimized (the program of repro.py)" in src
    # minimized, verdict not recorded: the full variant's, labelled so, and where the program's own is printed
    src = test_repro_source(PROGRAM, mini.with_(min_detail=None), tmp_path / "inputs.pt")
    assert "Verdict on the full variant before minimization: [0] float32[2, 2]: FULL VARIANT VERDICT" in src
    assert "`python repro.py` prints" in src
    # judged by eqsat-test's oracle, as repro.py is: a right compile passes, a wrong one fails with its verdict
    assert "from eqsat_test.runners.oracle.judge import judge as _eqsat_judge" in src
    ok = _run_rendered_test(src, lambda fn, **kw: fn)
    assert ok.wasSuccessful(), ok.failures + ok.errors
    wrong = _run_rendered_test(src, lambda fn, **kw: (lambda *a: tuple(t * 1.5 + 1.0 for t in fn(*a))))
    assert len(wrong.failures) == 1 and not wrong.errors, wrong.errors
    assert "Tensor-likes are not close" in wrong.failures[0][1] or "Mismatch" in wrong.failures[0][1]


def test_meta_next_step_names_only_files_that_exist(tmp_path):
    from eqsat_test.runners.findings.artifacts import _record, repro_verdict, write_test_repro
    from eqsat_test.runners.findings.triage import triage
    from eqsat_test.runners.records import as_finding
    d = tmp_path / "001-seed-miscompile-g0_seed"
    d.mkdir()
    import torch
    torch.save([torch.randn(2, 3), torch.randn(3, 2)], d / "inputs.pt")
    f = as_finding({"kind": "seed-miscompile", "variant": "g0_seed", "rules": [], "backend": "inductor",
                    "device": "cpu", "detail": "[0] float32[2, 2]: bad", "id": d.name})
    f = f.with_(triage_info=triage(f))
    f = f.with_(triage=f.triage_info["class"])
    assert "minifier_repro.py" in f.triage_info["next_step"]  # triage's generic advice names it
    write_test_repro(d, PROGRAM, f)  # as write_finding does, before meta.json is written
    step = f.triage_info["next_step"]
    assert "minifier_repro.py" not in step and "bisect.txt" not in step and "output_code.py" not in step
    assert "TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=4 python repro.py" in step
    (d / "meta.json").write_text(json.dumps({"triage_info": f.triage_info}))
    # the artifacts ran: the minifier found nothing, the bisector wrote its verdict, the rerun kept the code
    (d / "bisect.txt").write_text("backend: inductor\n")
    (d / "output_code.py").write_text("# code\n")
    _record(d, f, {"minifier": {"status": "not applicable", "why": "Dynamo's after-AOT check did not flag the graph"},
                   "files": ["bisect.txt", "output_code.py"]})
    meta = json.loads((d / "meta.json").read_text())
    step = meta["triage_info"]["next_step"]
    assert "minifier_repro.py here: not applicable" in step and "run minifier_repro.py" not in step
    assert "read bisect.txt" in step and "compare output_code.py" in step
    (d / "minifier_repro.py").write_text("# minified\n")
    _record(d, f, {"minifier": {"status": "minimized"}})
    assert "run minifier_repro.py" in json.loads((d / "meta.json").read_text())["triage_info"]["next_step"]
    # the verdict a repro.py run printed
    out = "eager: ran twice\n  differs at output[0][1]: eager 1, compiled 2\nVERDICT: MISCOMPILE (eager and compiled disagree)\n  [0] float32[2]: x\n"
    assert repro_verdict(out) == "MISCOMPILE (eager and compiled disagree): [0] float32[2]: x"
    assert repro_verdict("Traceback ...\nAccuracyError: Bad accuracy detected\n") is None
    # the debug rerun's own after-AOT check raised: not the program's verdict
    assert repro_verdict("VERDICT: CRASH (compiled raised AccuracyError; eager ran)\n") is None

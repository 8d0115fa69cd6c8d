"""A torch.compile backend given by path (`/abs/file.py:FN`, `rel/file.py:FN`) through every stage: verdicts,
confirmation, minimization, repro.py (which imports the backend file by its path), meta.json."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO, TEST_MODELS

from eqsat_test.runners.records import COMPILER_BUG_KINDS

PLANT = '''"""A fault-injecting backend: runs the graph eagerly, then scales one element of the first float output by 1.01."""
import torch


def one_off(gm, example_inputs):
    def run(*args):
        outs = list(gm(*args))
        for i, o in enumerate(outs):
            if isinstance(o, torch.Tensor) and o.is_floating_point() and o.numel():
                o = o.clone()
                flat = o.view(-1)
                k = flat.numel() // 2
                flat[k] = flat[k] * 1.01 + (1e-3 if bool(flat[k] == 0) else 0.0)
                outs[i] = o
                break
        return outs
    return run
'''
CHEAP = ["-n", "2", "--jobs", "1", "--inputs", "given", "--timeout", "240", "-r", str(TEST_MODELS / "e2e_rules"),
         "--no-sweep", "--no-artifacts", "--json"]


def _run_repro(folder: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(folder / "repro.py")], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_a_backend_given_by_absolute_path_finds_its_fault_and_its_repro_runs_alone(eqsat, tmp_path):
    plant = tmp_path / "backends" / "plant.py"
    plant.parent.mkdir()
    plant.write_text(PLANT)
    spec = f"{plant}:one_off"
    res = eqsat(TEST_MODELS / "relu_mlp.py", *CHEAP, "-b", spec, "--out", tmp_path / "out")
    assert res.rc == 1, f"rc={res.rc}\n{res.stderr[-3000:]}"
    report = res.json
    assert report["stats"]["internal_errors"] == 0
    bugs = [f for f in report["findings"] if f["kind"] in COMPILER_BUG_KINDS]
    assert bugs and all(f["backend"] == spec and f.get("confirmed") for f in bugs), bugs
    folder = Path(bugs[0]["repro"]).parent
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["backend"] == spec and "write_errors" not in meta
    assert meta.get("min_ops") is not None  # minimized under the same backend
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = _run_repro(folder, elsewhere)
    assert p.returncode == 1 and "VERDICT: MISCOMPILE" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]
    # The finding moved to another machine without the backend's file: the copy beside repro.py is used.
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    plant.unlink()
    p = _run_repro(moved, elsewhere)
    assert p.returncode == 1 and "VERDICT: MISCOMPILE" in p.stdout, p.stdout[-2000:] + p.stderr[-2000:]


def test_the_readme_command_with_a_relative_backend_path(warm, tmp_path):
    """`eqsat-test examples/elementwise.py --backend examples/backends/faulty_backends.py:one_wrong_element`
    from the repository: exit 1, and a repro.py that exits 1 run from anywhere."""
    out = tmp_path / "out"
    p = warm.run(["examples/elementwise.py", "--backend", "examples/backends/faulty_backends.py:one_wrong_element",
                  *CHEAP[:-1], "--out", out, "--json"], cli=True, cwd=REPO, timeout=600)
    assert p.returncode == 1, p.stderr[-3000:]
    report = json.loads(p.stdout)
    bugs = [f for f in report["findings"] if f["kind"] in COMPILER_BUG_KINDS]
    assert bugs and report["stats"]["internal_errors"] == 0
    assert bugs[0]["backend"] == f"{REPO / 'examples' / 'backends' / 'faulty_backends.py'}:one_wrong_element"
    r = _run_repro(Path(bugs[0]["repro"]).parent, tmp_path)
    assert r.returncode == 1 and "VERDICT: MISCOMPILE" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


WORKER_ONLY = PLANT.replace('"""A fault-injecting backend: runs the graph eagerly, then scales one element of the first float output by 1.01."""',
                            '"""The same fault, planted only inside eqsat-test\'s worker processes: state a fresh process does not have."""\nimport sys') \
    .replace("        outs = list(gm(*args))\n",
             "        outs = list(gm(*args))\n"
             "        if 'eqsat_test.runners.exec.alone' not in sys.modules:  # (imported by the workers only)\n"
             "            return outs\n")


def test_a_finding_that_does_not_reproduce_in_a_fresh_process_is_a_flaky_note(eqsat, tmp_path):
    """Confirm warm, prove cold: a fault that lives in the warm workers' state is found, confirmed in a warm worker
    and minimized there, then its repro.py, run once in a fresh process as a user would, agrees: a flaky note, not
    a compiler-bug candidate (exit 0)."""
    plant = tmp_path / "worker_only.py"
    plant.write_text(WORKER_ONLY)
    res = eqsat(TEST_MODELS / "relu_mlp.py", *CHEAP, "-b", f"{plant}:one_off", "--out", tmp_path / "out")
    assert res.rc == 0, f"rc={res.rc}\n{res.stderr[-3000:]}"
    report = res.json
    assert not [f for f in report["findings"] if f["kind"] in COMPILER_BUG_KINDS], report["findings"]
    flaky = [f for f in report["findings"] if f["kind"] == "flaky"]
    assert flaky and all(f["claimed_kind"] in COMPILER_BUG_KINDS for f in flaky), report["findings"]
    conf = flaky[0]["confirmation"]
    assert conf["where"] == "warm worker" and conf["outcome"] == "confirmed"  # reproduced warm ...
    assert conf["proof"]["outcome"] == "flaky" and "agreement" in conf["proof"]["why"]  # ... not in a fresh process
    assert report["stats"]["confirm"]["proof"]["not_reproduced"] >= 1

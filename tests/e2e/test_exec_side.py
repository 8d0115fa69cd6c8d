"""The execution side (runners: exec, worker, judge) runs where egglog cannot be imported; `--device cuda` without a GPU is a usage error."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
# every module of runners/ (the execution side), the CLI first
EXEC_MODULES = ("eqsat_test.runners.cli.main",) + tuple(sorted(
    ".".join(p.relative_to(REPO).with_suffix("").parts) for p in (REPO / "eqsat_test" / "runners").rglob("*.py")
    if p.stem not in ("__init__", "__main__") and p.relative_to(REPO).parts[:3] != ("eqsat_test", "runners", "cli")))
GENERATION_MODULES = ("egglog", "eqsat_test.rewrite.terms", "eqsat_test.rewrite.saturate", "eqsat_test.rewrite.extract", "eqsat_test.rewrite.generate")


@pytest.fixture(scope="module")
def no_egglog(tmp_path_factory) -> dict:
    """An environment in which `import egglog` fails in every process, the pool's workers included:
    a sitecustomize on PYTHONPATH that puts None in sys.modules['egglog']."""
    shim = tmp_path_factory.mktemp("no_egglog")
    (shim / "sitecustomize.py").write_text(
        "import sys\nsys.modules['egglog'] = None  # eqsat-test's exec-side test: egglog is not installed\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(REPO)])
    return env


def _py(code: str, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=REPO)


def test_the_shim_hides_egglog(no_egglog):
    r = _py("import egglog", no_egglog)
    assert r.returncode != 0 and "egglog" in r.stderr


def test_execution_modules_import_without_egglog(no_egglog):
    code = ("import sys\n"
            f"for m in {EXEC_MODULES!r}: __import__(m)\n"
            f"loaded = [m for m in {GENERATION_MODULES!r} if sys.modules.get(m) is not None]\n"
            "assert not loaded, loaded\n"
            "import eqsat_test.runners.protocol as w; assert w.compile_options('inductor+triton.x=\"a\",y=1') == "
            "('inductor', {'options': {'triton.x': 'a', 'y': 1}})\n"
            "print('ok')\n")
    r = _py(code, no_egglog)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """A small generated bundle (generation needs egglog: made with it, executed without it)."""
    pytest.importorskip("egglog")
    out = tmp_path_factory.mktemp("exec_side") / "bundle"
    model = REPO / "examples" / "elementwise.py"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for rules in ([], ["-r", "spelling", "-r", "algebra", "-r", "activation"]):  # the library, or a safe part
        r = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "generate", str(model), "-n", "2", *rules,
                            "-o", str(out)], capture_output=True, text=True, env=env, timeout=600, cwd=REPO)
        if r.returncode == 0:
            return out
    pytest.fail(f"generate failed: {r.stderr[-3000:]}")


def test_exec_runs_without_egglog(bundle, no_egglog, tmp_path):
    """`eqsat-test exec BUNDLE` with egglog unimportable in the command and in its workers."""
    out = tmp_path / "out"
    code = ("import sys\nfrom eqsat_test.runners.cli.main import main\n"
            f"sys.argv = ['eqsat-test', 'exec', {str(bundle)!r}, '-o', {str(out)!r}, '--json', '--no-minimize',"
            " '-j', '1', '--inputs', 'given', '-b', 'inductor', '--no-sweep', '--no-artifacts']\n"
            "main()\n")
    r = _py(code, no_egglog, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-3000:]}"
    report = json.loads(r.stdout)
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert report["executed"] == len(manifest["variants"])
    assert not [n for n in report["findings"] if n["kind"] == "internal-error"]
    raw = json.loads((out / "results.json").read_text())["raw"]
    assert all(x["status"] == "ok" for x in raw), [x.get("error") for x in raw]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
@pytest.mark.parametrize("command", ["exec", "run"])
def test_device_cuda_without_a_gpu_is_a_usage_error(command, tmp_path):
    if command == "exec":
        target = tmp_path / "bundle"
        target.mkdir()
        (target / "manifest.json").write_text(json.dumps({"format": "eqsat-bundle/1"}))
    else:
        target = REPO / "examples" / "elementwise.py"
    r = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", command, str(target), "--device", "cuda",
                        "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=300, cwd=REPO,
                       env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 4, (r.returncode, r.stderr[-2000:])
    assert "--device cuda" in r.stderr and "no CUDA GPU" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()  # refused before generating or executing anything

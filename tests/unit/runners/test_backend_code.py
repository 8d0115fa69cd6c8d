"""Custom backends in generated scripts: FILE.py:FN imported by its path (or the copy beside the script), module:FN by import, registered names as strings; and a finding whose repro cannot be rendered is still written whole."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.exec.backend_code import BACKEND_CALL, backend_code, backend_copy_name, copy_backend_file
from eqsat_test.runners.protocol import absolute_backend, compile_options

BACKEND_FILE = '''
import torch
CALLS = []
def doubling(gm, example_inputs):
    def run(*args):
        out = gm(*args)
        return [o * 2 if isinstance(o, torch.Tensor) else o for o in out]
    return run
'''


def _script(prelude: str, expr: str) -> str:
    return (prelude + "\nimport torch\n"
            f"f = torch.compile(lambda x: (x + 1,), backend={expr})\n"
            "print(f(torch.ones(3))[0].tolist())\n")


def test_registered_backends_are_string_literals():
    for spec in ("inductor", "aot_eager", "inductor-max-autotune", 'inductor+cpp.simdlen=4'):
        prelude, expr = backend_code(spec)
        assert prelude == "" and json.loads(expr) == compile_options(spec)[0]


def test_a_file_backend_is_imported_by_its_path_and_else_from_the_copy(tmp_path):
    src = tmp_path / "mine" / "plant.py"
    src.parent.mkdir()
    src.write_text(BACKEND_FILE)
    spec = f"{src}:doubling"
    prelude, expr = backend_code(spec)
    assert expr == BACKEND_CALL and str(src) in prelude
    here = tmp_path / "finding"
    here.mkdir()
    (here / "run.py").write_text(_script(prelude, expr))
    copy_backend_file(spec, here)
    assert (here / backend_copy_name(spec)).is_file()
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    for _ in range(2):  # from its path; then, with the file gone, from the copy beside the script
        p = subprocess.run([sys.executable, str(here / "run.py")], cwd=elsewhere, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        assert p.stdout.strip().splitlines()[-1] == "[4.0, 4.0, 4.0]"
        src.unlink(missing_ok=True)


def test_a_module_backend_is_imported(tmp_path):
    (tmp_path / "plant_mod.py").write_text(BACKEND_FILE)
    prelude, expr = backend_code("plant_mod:doubling")
    (tmp_path / "run.py").write_text(_script(prelude, expr))
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    p = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip().splitlines()[-1] == "[4.0, 4.0, 4.0]"


def test_relative_backend_paths_become_absolute(tmp_path, monkeypatch):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "plant.py").write_text(BACKEND_FILE)
    monkeypatch.chdir(tmp_path)
    assert absolute_backend("b/plant.py:doubling") == f"{tmp_path / 'b' / 'plant.py'}:doubling"
    other = tmp_path / "spec_dir"
    (other / "b").mkdir(parents=True)
    (other / "b" / "plant.py").write_text(BACKEND_FILE)
    assert absolute_backend("b/plant.py:doubling", other) == f"{other / 'b' / 'plant.py'}:doubling"  # base first
    for spec in ("inductor", "aot_eager", "mod.sub:fn", "/abs/x.py:fn", 'inductor+a=b', "missing.py:fn"):
        assert absolute_backend(spec) == spec


def test_a_finding_whose_repro_cannot_be_rendered_is_written_whole(tmp_path, monkeypatch):
    """One file that cannot be made (here: repro.py) leaves <file>.error.txt; meta.json and the rest are there."""
    import torch

    import eqsat_test.runners.findings.write as W
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for name in ("g0_seed.py", "g0_v001.py"):
        (bundle / name).write_text("import torch\n")
    torch.save([torch.ones(2)], bundle / "g0.inputs.pt")
    manifest = Manifest(model="m.py", graphs=(Graph("g0", inputs_file="g0.inputs.pt"),),
                        variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True), Variant("g0_v001", "g0", "g0_v001.py")))

    def broken(*a, **k):
        raise TypeError("Object of type function is not JSON serializable")
    monkeypatch.setattr(W, "_repro_source", broken)
    f = {"kind": "miscompile", "variant": "g0_v001", "backend": "inductor", "device": "cpu", "rules": ["r"]}
    d = W.write_finding(tmp_path / "out", "001-miscompile-g0_v001", f, bundle, manifest, env_text="")
    meta = json.loads((d / "meta.json").read_text())
    assert meta["kind"] == "miscompile" and "repro.py" in meta["write_errors"]
    assert (d / "variant.py").is_file() and (d / "seed.py").is_file() and (d / "inputs.pt").is_file()
    assert "not JSON serializable" in (d / "repro.py.error.txt").read_text()
    monkeypatch.undo()
    W.write_finding(tmp_path / "out", "001-miscompile-g0_v001", f, bundle, manifest, env_text="")  # written again: mended
    assert (d / "repro.py").is_file() and not (d / "repro.py.error.txt").exists()
    assert "write_errors" not in json.loads((d / "meta.json").read_text())

"""Bad input fails fast, before torch is imported, in one line with exit code 4, and creates nothing: the model file's presence, syntax and conventions, the output folder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, repo_env

from eqsat_test.runners.cli.precheck import InputError, check_model_file, check_out_dir, module_names

KERNELBENCH = ("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
               "def get_inputs():\n    return [torch.ones(2)]\n")


def test_the_conventions_text_is_the_loaders():
    from eqsat_test.lowering.load import LOOKED_FOR
    from eqsat_test.runners.cli import precheck
    assert precheck.LOOKED_FOR == LOOKED_FOR


@pytest.mark.parametrize("text,ok", [
    (KERNELBENCH, True),
    ("import torch\nclass Repro(torch.nn.Module):\n    pass\nargs = [torch.ones(1)]\n", True),
    ("import torch\nmodel = torch.nn.Linear(2, 2)\nexample_inputs = (torch.ones(2),)\n", True),
    ("import torch\ntry:\n    from mymodels import Model, get_inputs\nexcept ImportError:\n    raise\n", True),
    ("import torch\nif True:\n    model = torch.nn.ReLU()\n    def get_inputs():\n        return [torch.ones(1)]\n", True),
    ("from mymodels import *\n", True),  # names the text does not show: loading decides
    ("import torch\nglobals()['Model'] = 1\n", True),
    ("import torch\nx = 1\n", False),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\n", False),  # no get_inputs
    ("import torch\ndef f():\n    model = 1\n    example_inputs = 2\n", False),  # a function's own names
])
def test_model_file_conventions_read_from_the_text(tmp_path, text, ok):
    f = tmp_path / "m.py"
    f.write_text(text)
    if ok:
        check_model_file(f)
    else:
        with pytest.raises(InputError, match="no model found: looked for"):
            check_model_file(f)


def test_missing_wrong_kind_and_broken_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        check_model_file(tmp_path / "missing.py")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InputError, match="not a Python file"):
        check_model_file(tmp_path / "notes.txt")
    (tmp_path / "bad.py").write_text("import torch\ndef broken(:\n")
    with pytest.raises(InputError, match=r"bad.py:2: syntax error"):
        check_model_file(tmp_path / "bad.py")
    assert module_names(__import__("ast").parse("a, (b, *c) = 1, (2, 3)\nfor d in []: pass\n")) >= {"a", "b", "c", "d"}


def test_out_folder_checks_create_nothing(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        check_out_dir(tmp_path / "file" / "out")
    with pytest.raises(InputError, match="exists and is not a folder"):
        check_out_dir(tmp_path / "file")
    with pytest.raises(InputError, match="cannot create it"):
        check_out_dir(Path("/proc/eqsat-test-out"))
    check_out_dir(tmp_path / "a" / "b")  # fine: can be created ...
    check_out_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # ... and nothing was


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_out_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match="cannot"):
            check_out_dir(ro / "out")
    finally:
        ro.chmod(0o755)


_PROBE = """
import json, sys
from eqsat_test.runners.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    print(json.dumps({"rc": e.code, "torch": "torch" in sys.modules}))
"""


def _cli_in_fresh_process(tmp_path: Path, *args) -> tuple[dict, str]:
    p = subprocess.run([sys.executable, "-c", _PROBE, *map(str, args)], capture_output=True, text=True,
                       env=repo_env(), cwd=tmp_path, timeout=300)
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


@pytest.mark.parametrize("case", ["missing", "syntax", "no_model", "out_under_a_file", "out_in_proc", "bad_inputs"])
def test_bad_input_exits_4_before_torch_and_leaves_nothing(tmp_path, case):
    model = REPO / "examples" / "mlp.py"
    out = tmp_path / "out"
    (tmp_path / "afile").write_text("x")
    extra = []
    if case == "missing":
        model = tmp_path / "missing.py"
    elif case == "syntax":
        model = tmp_path / "syntax.py"
        model.write_text("import torch\ndef broken(:\n")
    elif case == "no_model":
        model = tmp_path / "no_model.py"
        model.write_text("import torch\nx = 1\n")
    elif case == "out_under_a_file":
        out = tmp_path / "afile" / "out"
    elif case == "out_in_proc":
        out = Path("/proc/eqsat-test-out")
    elif case == "bad_inputs":
        extra = ["--inputs", "nonsense"]
    before = sorted(p.name for p in tmp_path.iterdir())
    res, err = _cli_in_fresh_process(tmp_path, model, "-o", out, *extra)
    assert res == {"rc": 4, "torch": False}, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err and (len(lines) == 1 or case == "bad_inputs"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "a refused run creates nothing"


def test_exec_help_names_the_default_output_folder_it_uses(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from eqsat_test.runners.cli.main import cli, exec_out
    text = CliRunner().invoke(cli, ["exec", "--help"], terminal_width=200).output
    assert "default: BUNDLE-results beside the bundle" in " ".join(text.split())
    assert exec_out(Path("runs/bundle")) == Path("runs/bundle-results")
    assert exec_out(Path("bundle/")) == Path("bundle-results")
    monkeypatch.chdir(tmp_path)
    assert exec_out(Path(".")) == tmp_path.parent / f"{tmp_path.name}-results"

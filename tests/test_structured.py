"""Structured outputs end to end: a program returning dicts, tuples, lists, scalars, bools and None, nested, judged leaf by leaf through the real CLI (exec half, real torch.compile).

The generation half (capture -> lift -> emit) is checked too: whether the emitted variant returns
the model's structure or Dynamo's flat tuple of tensors (see test_emitted_variant_keeps_structure).
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from conftest import REPO, warm_server

from eqsat_test.codegen_templates import render

RELU_BUG = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"'
pytestmark = pytest.mark.xdist_group("structured")  # a parallel run: one worker makes `structured_run` once

# The program: every kind of container and leaf the oracle walks.
FORWARD = '''
def forward(x, w):
    h = torch.relu(x @ w)
    s = h.sum()
    return {"h": h, "pair": (h * 2, [s, None]), "flag": True, "n": 3, "pos": h > 0,
            "am": h.argmax(dim=1), "deep": [[(x.tanh(),)]]}
'''

MODULE = '''# hand-made variant module (the emitted format: forward, index_sources, Model, get_inputs)
import torch
from pathlib import Path

DEVICE = torch.device("cpu")
INPUTS_FILE = Path(__file__).with_name("g0.inputs.pt")
INPUT_NAMES = ["x", "w"]
{forward}

def index_sources(x, w):
    h = torch.relu(x @ w)
    return {{"['am']": (h, 1)}}


''' + render("variant_tail.py.j2")  # Model, get_inputs: as emitted


def make_bundle(folder: Path, programs: dict[str, str], inputs: list, *, is_param: list[bool]) -> Path:
    """A bundle by hand: {variant id: forward source}; the first is the seed."""
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(inputs, folder / "g0.inputs.pt")
    variants = []
    for k, (vid, fwd) in enumerate(programs.items()):
        (folder / f"{vid}.py").write_text(MODULE.format(forward=fwd))
        variants.append({"id": vid, "graph": "g0", "file": f"{vid}.py", "seed": k == 0, "mode": "seed" if k == 0 else "uniform",
                         "rules": [] if k == 0 else ["hand_made"], "ops": 6, "key": vid})
    manifest = {"format": "eqsat-bundle/1", "model": "hand-made", "rules": {"count": 0, "fired": {}},
                "graphs": [{"id": "g0", "inputs_file": "g0.inputs.pt", "input_names": ["x", "w"], "is_param": is_param,
                            "ops": 6, "op_names": ["torch.relu", "operator.matmul", "Tensor.sum", "operator.mul",
                                                   "Tensor.argmax", "Tensor.tanh"]}],
                "variants": variants}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


@pytest.fixture(scope="module")
def structured_run(eqsat, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("structured")
    g = torch.Generator().manual_seed(0)
    bundle = make_bundle(tmp / "bundle", {"g0_seed": FORWARD},
                         [torch.randn(6, 5, generator=g), torch.randn(5, 4, generator=g)], is_param=[False, True])
    res = eqsat("exec", bundle, "-b", "inductor", "-b", RELU_BUG, "--no-sweep", "--inputs", "given,random",
                "--no-artifacts", "--no-minimize", "--jobs", "1", "--json", "--out", tmp / "out", timeout=600)
    return res, tmp


def test_the_program_returns_the_structure():
    ns: dict = {"torch": torch}
    exec(FORWARD, ns)
    out = ns["forward"](torch.randn(6, 5), torch.randn(5, 4))
    assert set(out) == {"h", "pair", "flag", "n", "pos", "am", "deep"}
    assert out["pair"][1][1] is None and out["flag"] is True and out["n"] == 3
    assert isinstance(out["deep"][0][0], tuple)


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_correct_compile_of_a_structure_is_not_a_finding(structured_run):
    res, _ = structured_run
    assert res.rc == 1, res.stderr[-3000:]  # the injected backend's findings only
    rep = res.json
    clean = [f for f in rep["findings"] if f["backend"] == "inductor"]
    assert clean == [], clean


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_wrong_leaf_is_named_by_its_path(structured_run):
    res, tmp = structured_run
    bugs = [f for f in res.json["findings"] if f["backend"] == RELU_BUG]
    assert bugs and all(f["kind"] in ("miscompile", "seed-miscompile") for f in bugs), res.json["findings"]
    f = bugs[0]
    # relu feeds 'h', 'pair'[0], 'pair'[1][0] and 'pos': the first failing leaf is reported by path
    assert f["leaf"] in ("['h']", "['pair'][0]", "['pair'][1][0]", "['pos']", "['am']"), f
    assert f["leaf"] in f["detail"] and f["triage"] == "accuracy"
    assert "more failing leaves of 9" in f["detail"], f["detail"]  # all 9 leaves were judged
    # the per-leaf verdicts saw the whole structure: the raw results hold one verdict per input set
    raw = json.loads((tmp / "out" / "results.json").read_text())["raw"]
    ok_sets = [s for r in raw if r["backend"] == "inductor" for s in r["input_sets"]]
    assert ok_sets and all(s["ok"] for s in ok_sets)
    assert all(s["detail"].startswith("match: 9 leaves agree") for s in ok_sets), ok_sets[0]
    # the repro and the regression test compare the structure leaf by leaf and fail
    d = tmp / "out" / "findings" / f["id"]
    r = warm_server().run(["repro.py"], cli=False, cwd=d, timeout=300)
    assert r.returncode == 1 and "output['h']" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]


def _load(path: Path):
    spec = importlib.util.spec_from_file_location("emitted_seed", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.xfail(strict=True, reason="lowering/capture.py keeps Dynamo's flat graph outputs: the emitted "
                   "variant returns a tuple of tensors, not the model's dict/list/None/constant structure, so "
                   "Dynamo's output reconstruction is not exercised (the oracle itself handles any structure)")
@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_emitted_variant_keeps_structure(eqsat, tmp_path):
    """Generation half: a model returning a nested structure -> the emitted seed variant."""
    model = tmp_path / "structured_model.py"
    model.write_text('''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return {"h": h, "pair": (h * 2, [h.sum(), None]), "flag": True, "n": 3}


def get_inputs():
    return [torch.randn(4, 8)]
''')
    res = eqsat("generate", model, "-n", "1", "-r", REPO / "tests" / "models" / "e2e_rules", "-o", tmp_path / "b", timeout=300)
    assert res.rc == 0, res.stderr[-3000:]
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    seed = next(v for v in manifest["variants"] if v["seed"])
    mod = _load(tmp_path / "b" / seed["file"])
    with torch.no_grad():
        out = mod.forward(*mod.get_inputs())
    assert isinstance(out, dict) and set(out) == {"h", "pair", "flag", "n"}
    assert out["pair"][1][1] is None and out["flag"] is True and out["n"] == 3

"""The model corpus (benchmarks/corpus/): every file is a KernelBench-style model file that the
project's loader accepts, with a one-line docstring, module-level size constants and realistic but
bounded sizes; at its own sizes (slow) it runs eagerly with finite outputs."""
from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
import torch

from eqsat_test.lowering.load import load_model

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "benchmarks" / "corpus"
FILES = sorted(CORPUS.glob("*.py"))
IDS = [f.stem for f in FILES]

CATEGORIES = ("conv", "transformer", "norm", "loss", "reduce", "index", "act", "matmul")
MAX_INPUT_ELEMENTS = 2 ** 25
MAX_PARAMETERS = 60_000_000
_GIVEN = {"sizes": "given"} if "sizes" in inspect.signature(load_model).parameters else {}


def _load_given(path: Path, *, device: str | None = None, check_eager: bool = False):
    """The file at its own sizes; on the meta device when `device == "meta"` (nothing allocated)."""
    if device == "meta":
        with torch.device("meta"):
            return load_model(path, check_eager=False, **_GIVEN)
    return load_model(path, check_eager=check_eager, **_GIVEN)


def test_corpus_size_and_coverage():
    assert len(FILES) >= 110, f"only {len(FILES)} corpus files"
    counts = {c: sum(f.name.startswith(c + "_") for f in FILES) for c in CATEGORIES}
    assert all(n >= 10 for n in counts.values()), counts
    assert all(f.name.split("_")[0] in CATEGORIES for f in FILES), "a file without a category prefix"
    single = [f for f in FILES if f.read_text().startswith('"""Single op:')]
    assert len(single) >= 20, f"only {len(single)} single-op files"
    assert len([f for f in FILES if "random" in f.stem]) <= 3


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_file_shape(path: Path):
    """One-line docstring first, KernelBench functions, module-level int size constants, and no
    size written as a literal inside get_inputs()/get_init_inputs()."""
    source = path.read_text()
    first = source.splitlines()[0]
    assert re.fullmatch(r'""".+"""', first), f"first line is not a one-line docstring: {first!r}"
    tree = ast.parse(source)
    assert ast.get_docstring(tree) == first[3:-3]
    top = {n.name: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"Model", "get_inputs", "get_init_inputs"} <= set(top)
    constants = [t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                 and type(n.value.value) is int for t in n.targets if isinstance(t, ast.Name)]
    assert constants, "no module-level int size constant"
    for fn in ("get_inputs", "get_init_inputs"):
        big = [n.value for n in ast.walk(top[fn]) if isinstance(n, ast.Constant)
               and type(n.value) is int and abs(n.value) >= 8]
        assert not big, f"{fn}() hard-codes sizes {big}: use module-level constants"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_file_loads_within_bounds(path: Path):
    """The project's loader accepts it (built on the meta device at the file's own sizes): a
    KernelBench Model, tensor inputs of at most 2^25 elements, at most ~60M parameters."""
    m = _load_given(path, device="meta")
    assert m.convention == "kernelbench"
    assert type(m.module).__name__ == "Model"
    tensors = [x for x in m.inputs if isinstance(x, torch.Tensor)]
    assert tensors
    assert max(x.numel() for x in tensors) <= MAX_INPUT_ELEMENTS
    assert sum(p.numel() for p in m.module.parameters()) <= MAX_PARAMETERS


def _check_outputs(out, path: Path):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    assert outs and all(isinstance(o, torch.Tensor) for o in outs)
    for i, o in enumerate(outs):
        if o.is_floating_point():
            assert torch.isfinite(o).all(), f"{path.name}: output {i} is not finite"


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_file_runs_at_full_size(path: Path):
    """At the file's own sizes the model runs eagerly and every float output is finite."""
    m = _load_given(path)
    with torch.no_grad():
        out = m.module(*m.inputs)
    _check_outputs(out, path)


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_file_runs_at_test_size(path: Path):
    """At the loader's default (scaled-down test) size the model loads, runs and stays finite."""
    m = load_model(path)
    with torch.no_grad():
        out = m.module(*m.inputs)
    _check_outputs(out, path)

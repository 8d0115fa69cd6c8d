"""Tests of the hunt's generator (eqsat_test/hunt/): programs are valid (they load as model files, pass the fake-tensor
and eager check), the same seed gives the same file and the file records the generator's version and seed, and over
a few hundred seeds the op mix reaches every class the hunt aims at: views of inputs, in-place writes read back,
reductions and scans, index ops, dtypes, sizes, magnitudes, resampling, dynamic shapes."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
import torch

from eqsat_test.hunt import GENERATOR_VERSION
from eqsat_test.hunt.__main__ import make_one
from eqsat_test.hunt.check import check_source
from eqsat_test.hunt.inputs import LARGE_SIZES, ODD_SIZES, InputSpec
from eqsat_test.hunt.program import CLASS_WEIGHTS, GenOptions, draw_program
from eqsat_test.lowering.load import load_model

REPO = Path(__file__).resolve().parents[3]
MIX_SEEDS = 400


@lru_cache(maxsize=1)
def _mix():
    """Over MIX_SEEDS seeds: ops, classes, input dtypes, sizes, magnitudes, layouts, and program facts."""
    c: dict[str, Counter] = {k: Counter() for k in ("ops", "classes", "dtypes", "sizes", "values", "layouts", "facts")}
    for s in range(MIX_SEEDS):
        p = draw_program(s)
        c["ops"].update(p.ops)
        c["classes"].update(p.classes)
        c["dtypes"].update(i.dtype for i in p.inputs)
        c["sizes"].update(d for i in p.inputs for d in i.shape)
        c["values"].update(i.values for i in p.inputs)
        c["layouts"].update(i.layout for i in p.inputs)
        c["facts"].update(k for k, on in (("dynamic", p.dynamic), ("writes", bool(p.writes)),
                                          ("read_back", bool(p.read_back)), ("params", bool(p.params)),
                                          ("no_inputs", p.no_inputs)) if on)
        if p.no_inputs:  # the anchor gives the device, nothing else
            assert not any(re.search(rf"\b{p.inputs[0].name}\b(?!\.device)", st.expr) for st in p.stmts)
        c["facts"]["ops_in_range"] += int(3 <= len(p.stmts) <= 15)
    return c


def test_same_seed_same_file_and_the_file_says_how_it_was_made():
    for seed in (0, 7, 123456):
        a, b = draw_program(seed).source(), draw_program(seed).source()
        assert a == b
        tree = ast.parse(a)
        gen = next(ast.literal_eval(n.value) for n in tree.body
                   if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "GENERATOR")
        assert gen["version"] == GENERATOR_VERSION and gen["seed"] == seed
        assert f"--seed {seed}" in a
    assert draw_program(1).source() != draw_program(2).source()


def test_the_command_line_prints_the_same_file():
    out = subprocess.run([sys.executable, "-m", "eqsat_test.hunt", "--seed", "42"], capture_output=True, text=True,
                         cwd=REPO, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == draw_program(42).source()


def test_programs_are_valid_model_files(tmp_path):
    """Checked before use (fake tensors, then eager): nearly all pass; those that pass load like any model file."""
    verdicts = Counter()
    for seed in range(30):
        r = make_one(seed, GenOptions(), tmp_path)
        verdicts[r["stage"]] += 1
        if r["ok"]:
            loaded = load_model(r["path"])
            assert loaded.convention == "kernelbench" and loaded.inputs
    assert verdicts["ok"] >= 27, verdicts


def test_the_check_discards_what_eager_rejects():
    bad = draw_program(3).source().replace("    def forward(self", "    def forward(self, extra")
    assert not check_source(bad).ok
    wrong = draw_program(5).source().replace("return [", "return [torch.zeros(3, 5, 2, 9), ")
    v = check_source(wrong)
    assert not v.ok and v.stage in ("fake", "eager")
    assert check_source(draw_program(5).source()).ok


def test_the_op_mix_covers_the_classes():
    c = _mix()
    assert set(CLASS_WEIGHTS) <= set(c["classes"]), c["classes"]
    wanted = {
        # views of inputs, in-place writes read back
        "flip", "slice", "transpose", "expand", "permute", "narrow", "select", "add_", "index_put_", "copy_",
        "_foreach_add_", "index_add_", "setitem",
        # reductions and scans
        "sum", "mean", "var", "std", "amax", "argmin", "argmax", "logsumexp", "cumsum", "cumprod", "var_mean",
        "softmax",
        # index ops
        "gather", "scatter", "scatter_add", "index_add", "index_copy", "index_select", "take_along_dim", "index_put",
        # resampling
        "interpolate", "max_pool2d", "avg_pool1d", "conv2d",
        # domain edges, integer arithmetic, casts
        "erfinv", "atanh", "acosh", "floor_divide", "remainder", "threshold", "arange", "to", "matmul",
    }
    missing = wanted - set(c["ops"])
    assert not missing, f"never drawn in {MIX_SEEDS} seeds: {sorted(missing)}"


def test_the_inputs_cover_dtypes_sizes_magnitudes_and_layouts():
    c = _mix()
    assert {"int8", "uint8", "int16", "int64", "bfloat16", "float16", "float32", "bool"} <= set(c["dtypes"])
    sizes = set(c["sizes"])
    assert 0 in sizes and 1 in sizes and set(ODD_SIZES) <= sizes and sizes & set(LARGE_SIZES)
    assert {"wide", "edge1", "tiny", "small", "big", "full", "index"} <= set(c["values"])
    assert {"transposed", "stepped", "expanded", "offset", "contiguous"} <= set(c["layouts"])
    facts = c["facts"]
    assert facts["ops_in_range"] == MIX_SEEDS
    for fact in ("dynamic", "writes", "read_back", "params", "no_inputs"):
        assert facts[fact] > 0, fact
    assert facts["no_inputs"] < MIX_SEEDS * 0.1  # rare


def test_no_inplace_option_generates_no_writes():
    for seed in range(40):
        p = draw_program(seed, GenOptions(inplace=False))
        assert "inplace" not in p.classes and not p.writes
        assert "'inplace': False" in p.source() and "--no-inplace" in p.source()


@pytest.mark.parametrize("layout", ["transposed", "stepped", "expanded", "offset"])
def test_input_layouts_keep_their_shape_and_strides(layout):
    spec = InputSpec("x0", (5, 7), "float32", "normal", layout=layout, seed=3)
    g = torch.Generator()
    x = eval(spec.source(), {"torch": torch, "g": g})
    assert tuple(x.shape) == (5, 7) and x.dtype == torch.float32
    assert x.storage_offset() > 0 if layout == "offset" else not x.is_contiguous()


def test_magnitudes_reach_their_edges():
    g = torch.Generator()

    def make(values, dtype="float32"):
        return eval(InputSpec("x", (4096,), dtype, values, seed=1).source(), {"torch": torch, "g": g})

    assert make("wide").abs().max() > 1e29
    edge = make("edge1").abs()
    assert edge.min() > 0.99 and edge.max() <= 1.0
    assert make("big").min() >= 1 and make("big").max() > 1e24
    tiny = make("tiny").abs()
    assert tiny[tiny > 0].min() < torch.finfo(torch.float32).tiny
    assert make("wide", "float16").isfinite().all()

"""Tests of windows of real graphs (eqsat_test/hunt/windows.py): windows cut from corpus models load as model files
and pass the hunt's check, keep the source graph's shapes and dtypes at their boundary (integers in their real range),
record where they were cut, and the same seed gives the same file again in a fresh process."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from eqsat_test.hunt.__main__ import make_window
from eqsat_test.hunt.check import check_source
from eqsat_test.hunt.sources import model_files, source_order
from eqsat_test.hunt.windows import (
    GIVEN_ELEMENTS,
    MAX_ELEMENTS,
    MAX_NODES,
    MIN_NODES,
    CutError,
    captured,
    cut,
    window_of,
)
from eqsat_test.lowering.load import load_model
from eqsat_test.runners.campaign.hunt_programs import WINDOW_SHARE, is_window

REPO = Path(__file__).resolve().parents[3]
CORPUS = REPO / "benchmarks" / "corpus"
MODELS = ("transformer_gpt2_block.py", "conv_resnet_basic_block.py", "index_embedding_gpt2.py")
SEEDS = range(4)


def _windows(name: str):
    src = captured(CORPUS / name)
    return src, [cut(s, src) for s in SEEDS]


def _meta(src, gi: int, node: str) -> tuple[tuple[int, ...], torch.dtype]:
    """The node's shape and dtype as the captured graph's meta records them."""
    n = next(n for n in src.graphs[gi].graph.nodes if n.name == node)
    v = n.meta.get("val", n.meta.get("example_value"))
    assert isinstance(v, torch.Tensor), node
    return tuple(v.shape), v.dtype


@pytest.mark.parametrize("name", MODELS)
def test_windows_load_pass_check_and_keep_the_boundary(name, tmp_path):
    src, windows = _windows(name)
    verdicts = []
    for w in windows:
        assert MIN_NODES <= len(w.ops) <= MAX_NODES
        text = w.source()
        verdicts.append(check_source(text, f"w{w.seed}.py"))
        path = tmp_path / f"w{w.seed}.py"
        path.write_text(text)
        loaded = load_model(path)  # the tool's own loader takes it, at its sizes (below the test bound)
        assert loaded.convention == "kernelbench" and not loaded.sizes.get("scaled")
        for spec, x, node in zip(w.inputs, loaded.inputs, w.input_nodes):
            assert isinstance(x, torch.Tensor) and x.numel() <= MAX_ELEMENTS
            if node:  # an input stands for a value flowing in: the source's shape and dtype
                assert (tuple(x.shape), x.dtype) == _meta(src if w.bound == src.bound else captured(
                    CORPUS / name, w.bound), w.graph, node), (w.seed, spec.name, node)
            if spec.values == "range":  # integers kept in the range the real graph's value had
                kept = x[x != spec.sentinel] if spec.sentinel is not None else x
                assert spec.low <= int(kept.min()) and int(kept.max()) < spec.high
            if spec.values == "given":  # small integer inputs: the real values themselves
                assert x.flatten().tolist() == list(spec.data)
        with torch.no_grad():
            outs = loaded.module(*loaded.inputs)
        graph_src = src if w.bound == src.bound else captured(CORPUS / name, w.bound)
        assert [(tuple(o.shape), o.dtype) for o in outs] == [_meta(graph_src, w.graph, n) for n in w.output_nodes]
    assert all(v.stage in ("ok", "degenerate") for v in verdicts), [v.reason for v in verdicts]
    assert sum(v.ok for v in verdicts) >= 2, [v.to_dict() for v in verdicts]
    assert len({w.nodes for w in windows}) >= 2  # seeds cut different windows


def test_window_header_names_source_graph_nodes_and_seed():
    src, windows = _windows("transformer_gpt2_block.py")
    w = windows[1]
    tree = ast.parse(w.source())
    header = next(ast.literal_eval(s.value) for s in tree.body
                  if isinstance(s, ast.Assign) and getattr(s.targets[0], "id", "") == "GENERATOR")
    assert header["source"] == "benchmarks/corpus/transformer_gpt2_block.py" and header["seed"] == 1
    assert header["graph"] == w.graph and tuple(header["nodes"]) == w.span and w.span[0] <= w.span[1]
    names = [n.name for n in src.graphs[w.graph].graph.nodes]
    assert names.index(w.nodes[0]) == w.span[0] or w.bound != src.bound
    rec = w.record()
    assert rec["kind"] == "window" and rec["version"].startswith("windows-") and rec["ops"] == list(w.ops)


def test_integer_inputs_keep_the_real_range():
    """An embedding's token ids: the real ids where few (GIVEN_ELEMENTS), else drawn within the ids the real graph
    had, so every lookup stays in the table."""
    src = captured(CORPUS / "index_embedding_gpt2.py")
    ints = [(w, s) for w in (cut(k, src) for k in range(12)) for s in w.inputs if s.dtype == "int64"]
    assert ints, "no window of the embedding model reads its token ids"
    for w, s in ints:
        assert s.values in ("given", "range")
        if s.values == "given":
            assert 0 < len(s.data) <= GIVEN_ELEMENTS and min(s.data) >= 0
        else:
            assert 0 <= s.low < s.high
        assert check_source(w.source()).stage in ("ok", "degenerate")


def test_an_ignore_index_stays_a_sentinel_and_the_rest_in_range():
    """Labels with ignore_index -100: drawn in the labels' real range, -100 on some; never a negative in between."""
    w = window_of(0, CORPUS / "loss_lm_cross_entropy.py")
    labels = [s for s in w.inputs if s.values == "range"]
    assert labels and labels[0].sentinel == -100 and labels[0].low >= 0
    ns: dict = {}
    exec(compile(w.source(), "w.py", "exec"), ns)
    x = ns["get_inputs"]()[w.inputs.index(labels[0])]
    assert set(x[x < 0].tolist()) == {-100} and int(x[x >= 0].max()) < labels[0].high
    assert check_source(w.source()).ok


def test_the_same_seed_gives_the_same_file_in_a_fresh_process():
    path = CORPUS / "conv_resnet_basic_block.py"
    r = subprocess.run([sys.executable, "-m", "eqsat_test.hunt", "--window", "2", "--source",
                        "benchmarks/corpus/conv_resnet_basic_block.py"], cwd=REPO, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == window_of(2, path).source()
    assert window_of(2, path).source() != window_of(3, path).source()


def test_a_window_seed_takes_the_first_file_that_yields_one(tmp_path):
    one_op = str(CORPUS / "loss_cross_entropy.py")  # one op: no window of 3
    files = model_files([CORPUS / "conv_resnet_basic_block.py", one_op])
    seed = next(s for s in range(40) if source_order(s, files)[0] == one_op)
    made = make_window(seed, files, tmp_path)
    assert made["record"]["kind"] == "window"
    assert made["record"]["source"] == "benchmarks/corpus/conv_resnet_basic_block.py"
    assert made["ok"] or made["stage"] == "degenerate", made
    if made["ok"]:
        assert Path(made["path"]).read_text() == window_of(seed, CORPUS / "conv_resnet_basic_block.py").source()
    bad = make_window(seed, [one_op], tmp_path)
    assert not bad["ok"] and bad["stage"] == "cut" and "compute nodes" in bad["reason"]
    assert json.dumps(bad) and bad["record"]["source"] == "benchmarks/corpus/loss_cross_entropy.py"
    with pytest.raises(CutError):
        window_of(0, one_op)


def test_a_hunt_mixes_windows_at_its_share():
    assert not any(is_window(s, 0.0) for s in range(200)) and all(is_window(s, 1.0) for s in range(200))
    n = sum(is_window(s, WINDOW_SHARE) for s in range(2000))
    assert abs(n / 2000 - WINDOW_SHARE) < 0.05
    assert [is_window(s, 0.5) for s in range(50)] == [is_window(s, 0.5) for s in range(50)]

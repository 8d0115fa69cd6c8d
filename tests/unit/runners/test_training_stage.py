"""The stage a failing gradient comes from (runners/exec/training.py backward_stage), told by the backends torch
ships: each stage run on a program whose eager gradients are known. Real Inductor compiles: slow."""
from __future__ import annotations

import pytest
import torch
from test_training import _training, mlp, mlp_inputs

from eqsat_test.runners.exec.training import backward_stage
from eqsat_test.runners.oracle.inputs import InputSet
from eqsat_test.runners.oracle.reference import eager_reference

pytestmark = pytest.mark.slow


def _ref():
    inputs = mlp_inputs()
    t = _training(mlp, inputs)
    return t, eager_reference(t.step, t.index_sources, InputSet("given", inputs))


def test_every_stage_agrees_on_a_clean_program():
    """aot_eager, Inductor's decompositions and partitioner, and Inductor's forward with an eager backward all
    agree with eager: what is left is Inductor's backward code (and every stage's run works)."""
    t, r = _ref()
    assert backward_stage(mlp, r, t, "inductor") == "inductor-backward"
    assert backward_stage(mlp, r, t, "examples/backends/grad_faulty_backends.py:grad_scaled") == "backend"


def test_a_wrong_backward_decomposition_is_told_apart(monkeypatch):
    """tanh's backward decomposed wrong in Inductor's table: aot_eager agrees, aot_eager_decomp_partition does not."""
    from torch._inductor import compile_fx
    table = dict(compile_fx.select_decomp_table())
    table[torch.ops.aten.tanh_backward.default] = lambda grad, y: grad * (1 - y * y) * 1.01
    monkeypatch.setattr(compile_fx, "select_decomp_table", lambda: table)
    t, r = _ref()
    assert backward_stage(mlp, r, t, "inductor") == "decompositions-partitioner"

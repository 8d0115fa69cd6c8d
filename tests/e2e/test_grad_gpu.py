"""Training mode on CUDA (`pytest -m gpu`): the real command line with `--grad --device cuda`; Inductor (Triton) on a clean
model reports nothing, a backward-only fault backend is a grad-miscompile. Without a CUDA GPU these skip."""
from __future__ import annotations

import pytest
import torch
from conftest import REPO, TEST_MODELS

from eqsat_test.runners.records import COMPILER_BUG_KINDS

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
FAULTS = REPO / "examples" / "backends" / "grad_faulty_backends.py"
ARGS = ["--grad", "--device", "cuda", "-n", "3", "--jobs", "1", "--timeout", "300", "--no-sweep", "--no-artifacts",
        "--json", "-r", str(TEST_MODELS / "e2e_rules")]


@pytest.mark.parametrize("model", ["examples/mlp.py", "examples/attention.py", "tests/models/dropout_train.py"])
def test_cuda_training_mode_clean(eqsat, tmp_path, model):
    res = eqsat(REPO / model, *ARGS, "-b", "inductor", "--out", tmp_path / "out", timeout=900)
    assert res.rc == 0, res.stderr[-3000:]
    assert [f for f in res.json["findings"] if f["kind"] in COMPILER_BUG_KINDS] == []


@pytest.mark.parametrize("fault", ["grad_negated", "saved_bf16"])
def test_cuda_backward_fault_found(eqsat, tmp_path, fault):
    res = eqsat(REPO / "examples" / "mlp.py", *ARGS, "-b", f"{FAULTS}:{fault}", "--out", tmp_path / "out", timeout=900)
    assert res.rc == 1, res.stderr[-3000:]
    assert {f["kind"] for f in res.json["findings"] if f["kind"] in COMPILER_BUG_KINDS} == {"grad-miscompile"}

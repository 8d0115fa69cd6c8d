"""The oracle against the planted faults of examples/backends/faulty_backends.py: each fault that changes an output is flagged, `identity` never, strides only noted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from eqsat_test.runners.oracle.inputs import input_sets
from eqsat_test.runners.oracle.judge import MATCH, MISMATCH, STRUCTURE_MISMATCH
from eqsat_test.runners.oracle.reference import eager_reference, judge_against
from eqsat_test.runners.protocol import compile_options

REPO = Path(__file__).resolve().parents[4]
FAULTY = REPO / "examples" / "backends" / "faulty_backends.py"


def _faulty():
    if "faulty_backends" not in sys.modules:
        spec = importlib.util.spec_from_file_location("faulty_backends", FAULTY)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["faulty_backends"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["faulty_backends"]


def _g():
    return torch.Generator().manual_seed(7)


# name -> (forward, inputs, is_param, index sources)
PROGRAMS = {
    "row_sum": (lambda x: x.sum(-1), lambda: [torch.randn(32, 256, generator=_g())], [False], lambda x: {}),
    "softmax": (lambda x: x.softmax(-1), lambda: [torch.randn(16, 4096, generator=_g()) * 3], [False], lambda x: {}),
    "matmul": (lambda a, b: a @ b, lambda: [torch.randn(32, 64, generator=_g()), torch.randn(64, 16, generator=_g())],
               [False, True], lambda a, b: {}),
    "layer_norm": (lambda x, w: F.layer_norm(x, (128,), w), lambda: [torch.randn(16, 128, generator=_g()) + 3,
                                                                     torch.randn(128, generator=_g())],
                   [False, True], lambda x, w: {}),
    "argmax": (lambda x: (x.amax(-1), x.argmax(-1)), lambda: [torch.randn(16, 100, generator=_g())], [False],
               lambda x: {"[1]": (x, -1)}),
    "edge_values": (lambda x: (x * 2, torch.relu(x), x.sum(-1)), lambda: [torch.randn(8, 64, generator=_g())], [False],
                    lambda x: {}),
}

FAULTS = ["identity", "one_wrong_element", "small_doubled", "argmax_off_by_one", "nan_to_zero", "inf_sign_flip",
          "wrong_dtype", "transposed_stride"]


def _verdicts(program: str, fault: str):
    """[(input set name, fired, verdict)] for the program compiled with the fault, on a random and
    a special input set."""
    fb = _faulty()
    fwd, make, is_param, idx = PROGRAMS[program]
    torch._dynamo.reset()
    compiled = torch.compile(fwd, backend=getattr(fb, fault))
    out = []
    for s in input_sets(make(), is_param=is_param, seed=3, kinds=("random", "special")):
        r = eager_reference(fwd, idx, s)  # as the worker does
        with torch.no_grad():
            fb.FIRED.clear()
            got = compiled(*s.inputs)
        out.append((s.name, any(fb.FIRED), judge_against(r, got)))
    return out


@pytest.mark.parametrize("program", list(PROGRAMS))
@pytest.mark.parametrize("fault", FAULTS)
def test_fault_is_flagged_where_it_fires(program, fault):
    results = _verdicts(program, fault)
    for name, fired, v in results:
        if fault == "identity":
            assert not fired and (v.ok, v.kind) == (True, MATCH), (name, v.detail)
        elif not fired:
            assert v.ok, (name, v.detail)  # nothing changed: nothing to flag
        elif fault == "transposed_stride":
            assert (v.ok, v.kind) == (True, MATCH) and "strides differ" in v.detail, (name, v.detail)
        elif fault == "wrong_dtype":
            assert (v.ok, v.kind) == (False, STRUCTURE_MISMATCH) and "dtype" in v.detail, (name, v.detail)
        else:
            assert (v.ok, v.kind) == (False, MISMATCH), (name, v.detail)


def test_every_fault_fires_somewhere():
    """The programs above exercise every fault (else the test above proves nothing for it)."""
    fired = {f: False for f in FAULTS if f != "identity"}
    for fault in fired:
        for program in PROGRAMS:
            if any(f for _, f, _ in _verdicts(program, fault)):
                fired[fault] = True
                break
    assert all(fired.values()), fired


def test_faulty_backends_load_by_spec():
    backend, opts = compile_options(f"{FAULTY}:one_wrong_element")
    assert callable(backend) and backend.__name__ == "one_wrong_element" and opts == {}

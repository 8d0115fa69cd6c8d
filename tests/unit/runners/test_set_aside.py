"""Input sets the program itself refuses (random class indices past the classes, a cross-entropy target outside [0, 1]) are set aside and not judged: the worker keeps judging the others, and the pipeline blames a rule only when a variant refuses a set its seed runs on."""
from __future__ import annotations

import pytest

from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.judging import judge_results
from eqsat_test.runners.records import FindingKind, Result, ResultStatus, Task, TaskKind
from eqsat_test.runners.worker import run_task

# the given targets are classes 0..4 and the ignored 255: "random" draws targets in [0, 255], past the classes
NLL = """import torch
import torch.nn.functional as F
DEVICE = torch.device("cpu")
def forward(logits, target):
    return (F.nll_loss(F.log_softmax(logits, dim=1), target, ignore_index=255),)
def index_sources(logits, target):
    return {}
def get_inputs(device=None):
    g = torch.Generator().manual_seed(0)
    target = torch.randint(0, 5, (4, 6), generator=g)
    target[0, 0] = 255
    return [torch.randn(4, 5, 6, generator=g), target]
"""


@pytest.fixture
def nll(tmp_path):
    path = tmp_path / "nll.py"
    path.write_text(NLL)
    return Task(id="t", variant="v", file=str(path), backend="aot_eager", device="cpu", is_param=[False, False])


def test_the_sets_the_program_refuses_are_set_aside_and_the_given_set_is_judged(nll):
    r = run_task(nll)
    assert r.status == ResultStatus.OK, r
    assert [s.name for s in r.input_sets] == ["given"] and r.input_sets[0].ok
    assert set(r.set_aside or {}) == {"random-0", "special-0"}
    assert all(m.startswith("IndexError: Target") for m in (r.set_aside or {}).values()), r.set_aside


def test_refusing_the_given_set_or_every_set_is_an_eager_error(nll, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(NLL.replace("target[0, 0] = 255", "target[0, 0] = 99"))
    r = run_task(nll.with_(file=str(bad)))
    assert r.status == ResultStatus.EAGER_ERROR and r.input_set == "given"
    r = run_task(nll.with_(input_kinds=["random", "special"]))
    assert r.status == ResultStatus.EAGER_ERROR and "every input set" in r.error_message
    assert set(r.set_aside or {}) == {"random-0", "special-0"}


def _manifest() -> Manifest:
    return Manifest(model="m.py", graphs=(Graph("g0", op_names=("torch.nn.functional.nll_loss",)),),
                    variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True, mode="seed"),
                              Variant("g0_v001", "g0", "g0_v001.py", rules=("r1",), mode="uniform")))


def _result(variant: str, aside: dict) -> Result:
    return Result.from_dict({"task": variant, "variant": variant, "backend": "inductor", "device": "cpu", "status": "ok",
                             "input_sets": [{"name": "given", "ok": True, "kind": "ok"}], "set_aside": aside})


def test_a_variant_that_refuses_a_set_its_seed_runs_on_is_an_unsound_rewrite(tmp_path):
    why = {"random-0": "IndexError: Target 228 is out of bounds."}
    # the seed refuses it too: the input set's fault, no rule's
    findings, notes = judge_results(_manifest(), [_result("g0_seed", why), _result("g0_v001", why)], tmp_path)
    assert findings == [] and notes == []
    # the variant refuses one more
    more = {**why, "special-0": "RuntimeError: all elements of target should be between 0 and 1"}
    findings, notes = judge_results(_manifest(), [_result("g0_seed", why), _result("g0_v001", more)], tmp_path)
    assert findings == [] and len(notes) == 1
    assert notes[0].kind == FindingKind.UNSOUND_REWRITE and notes[0].input_set == "special-0"
    assert notes[0].rules == ["r1"] and "its seed runs on" in notes[0].detail


BCE = """import torch
import torch.nn.functional as F
DEVICE = torch.device("cpu")
def forward(logits, mask):
    return (F.binary_cross_entropy(torch.sigmoid(logits), mask),)
def index_sources(logits, mask):
    return {}
def get_inputs(device=None):
    g = torch.Generator().manual_seed(0)
    return [torch.randn(4, 64, generator=g), (torch.rand(4, 64, generator=g) > 0.5).float()]
"""


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_on_a_gpu_a_refused_set_is_no_device_side_assert(tmp_path):
    """A fresh 0/1 mask is no probability: on CUDA, binary_cross_entropy's device-side assert would end the
    process's CUDA context (every later task an internal error); it is refused on the CPU first."""
    path = tmp_path / "bce.py"
    path.write_text(BCE)
    task = Task(id="t", variant="v", file=str(path), backend="inductor", device="cuda", is_param=[False, False])
    for _ in range(2):  # the second task runs in the same process: its CUDA context is alive
        r = run_task(task)
        assert r.status == ResultStatus.OK, r
        assert [s.name for s in r.input_sets] == ["given"] and set(r.set_aside or {}) == {"random-0", "special-0"}


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_a_worker_whose_cuda_context_an_assert_ended_is_replaced(tmp_path):
    """A device-side assert that no check saw coming (here: the given indices themselves out of range) ends the
    worker's CUDA context: its result says so and the pool starts the next task in a fresh process."""
    from eqsat_test.runners.exec.pool import PoolOptions, Worker
    bad, good = tmp_path / "bad.py", tmp_path / "bce.py"
    bad.write_text(NLL.replace("target[0, 0] = 255", "target[0, 0] = 99"))
    good.write_text(BCE)
    w = Worker(0, PoolOptions(timeout=300), lambda s: None)
    try:
        r = w.run(Task(id="t1", variant="v", file=str(bad), backend="inductor", device="cuda",
                       is_param=[False, False], input_kinds=["given"]))
        assert r.cuda_context_lost and w.proc is None, r
        r = w.run(Task(id="t2", variant="v", file=str(good), backend="inductor", device="cuda",
                       is_param=[False, False]))
        assert r.status == ResultStatus.OK and r.cuda_context_lost is None, r
    finally:
        w.kill()


LOST_WORKER = """import json, sys
TAG = "@@EQSAT-RESULT@@ "
print(TAG + json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    task = json.loads(line)
    print(TAG + json.dumps({"task": task["id"], "status": "ok", "batch_results": [None], "batch": {},
                            "cuda_context_lost": "AcceleratorError: x"}), flush=True)
"""


def test_the_pool_replaces_a_worker_that_lost_its_cuda_context(monkeypatch):
    """Whatever the result (a batch's, ok on the CPU as far as it says), one that says the CUDA context is gone
    ends its worker: the next task starts in a fresh process."""
    import sys

    import eqsat_test.runners.exec.pool as P
    real = P.subprocess.Popen
    monkeypatch.setattr(P.subprocess, "Popen", lambda args, **kw: real([sys.executable, "-c", LOST_WORKER], **kw))
    w = P.Worker(0, P.PoolOptions(timeout=30), lambda s: None)
    try:
        r = w.run(Task(id="b", kind=TaskKind.BATCH))
        assert r.cuda_context_lost and r.batch_results == (None,) and w.proc is None
    finally:
        w.kill()


@pytest.mark.gpu
@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_a_batch_sends_variants_with_refused_sets_to_their_single_tasks_without_an_assert(tmp_path):
    from eqsat_test.runners.exec.batch import run_batch_task
    from eqsat_test.runners.worker import cuda_context_error
    path = tmp_path / "bce.py"
    path.write_text(BCE)
    sub = Task(variant="v", file=str(path), backend="inductor", device="cuda", is_param=[False, False])
    res = run_batch_task(Task(id="b", kind=TaskKind.BATCH, backend="inductor", device="cuda",
                              batch=(sub.with_(id="t1"), sub.with_(id="t2", variant="v2"))))
    assert res.batch_results == (None, None) and len((res.batch or {})["eager_errors"]) == 2, res
    assert cuda_context_error() is None

"""Batch mode (runners/exec/batch.py): K variants per compile, suspects confirmed alone unless they fail as their seed.

One small bundle (an MLP with relu, and variants where relu is spelled other ways) is executed
with Inductor's test-only relu fault injected, once plainly and once in batches: the fault must
be found and confirmed in batch mode, and both modes must report the same findings.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from eqsat_test.runners.exec.batch import fails_as_its_seed, make_batches
from eqsat_test.runners.records import InputSetVerdict, Result, ResultStatus, Task

MODEL = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        return h * torch.sigmoid(x) + x


def get_inputs():
    return [torch.randn(4, 8)]
'''

RULES = '''
import torch
from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule


@rule(family="activation", numerics="exact", bidirectional=True)
def relu_is_clamp_min(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.clamp_min(x, 0.0)


@rule(family="algebra", numerics="exact", same_shape=False)
def mul_commutes(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x * y, y * x


@rule(family="algebra", numerics="exact", same_shape=False)
def add_commutes(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x + y, y + x
'''

FAULT = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"'


def test_make_batches_groups_by_key_and_keeps_singles():
    tasks = [Task(id=f"t{i}", variant=f"v{i}", backend="inductor") for i in range(11)]
    key = lambda t: None if t.id in ("t0", "t10") else int(t.id[1:]) % 2  # noqa: E731
    batches, singles = make_batches(tasks, 4, key)
    covered = sorted(i for _, part in batches for i in part) + singles
    assert sorted(covered) == list(range(11))
    assert 0 in singles and 10 in singles
    for bt, part in batches:
        assert len(part) <= 4 and len({key(tasks[i]) for i in part}) == 1
        assert [t.id for t in bt.batch] == [tasks[i].id for i in part] and bt.group == repr(key(tasks[part[0]]))
    assert make_batches(tasks, 1, key) == ([], list(range(11)))
    by_group, singles = make_batches(tasks, lambda g: 8 if g == 0 else 1, key)  # k per group (--batch auto)
    assert [part for _, part in by_group] == [[2, 4, 6, 8]] and singles == [0, 1, 3, 5, 7, 9, 10]


def _result(*sets: tuple[str, bool, str], status=ResultStatus.OK) -> Result:
    return Result(task="t", variant="v", backend="inductor", status=status,
                  input_sets=tuple(InputSetVerdict(name=n, ok=ok, kind=kind) for n, ok, kind in sets))


def test_a_suspect_keeps_its_batch_verdict_only_where_it_fails_exactly_as_its_seed():
    seed = _result(("given", True, "match"), ("special", False, "mismatch"))
    assert fails_as_its_seed(_result(("given", True, "match"), ("special", False, "mismatch")), seed)
    assert not fails_as_its_seed(_result(("given", False, "mismatch"), ("special", False, "mismatch")), seed)
    assert not fails_as_its_seed(_result(("given", True, "match"), ("special", False, "structure-mismatch")), seed)
    assert not fails_as_its_seed(_result(("given", True, "match")), seed)  # a set the seed failed is missing
    clean = _result(("given", True, "match"), ("special", True, "match"))
    assert not fails_as_its_seed(clean, clean)  # nothing failed: nothing to fold
    crashed = _result(("given", True, "match"), ("special", False, "mismatch"), status=ResultStatus.COMPILE_CRASH)
    assert not fails_as_its_seed(crashed, seed) and not fails_as_its_seed(seed, crashed)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    d = tmp_path_factory.mktemp("batch")
    (d / "model.py").write_text(textwrap.dedent(MODEL))
    (d / "rules.py").write_text(textwrap.dedent(RULES))
    m = generate(d / "model.py", d / "bundle", GenerateOptions(variants=7, rules=(str(d / "rules.py"),)))
    assert m.rewritten_count >= 4
    return d / "bundle"


def _execute(bundle: Path, out: Path, batch: int) -> dict:
    from eqsat_test.runners.pipeline import ExecOptions, execute_bundle
    opts = ExecOptions(backends=(FAULT,), jobs=1, timeout=240, minimize=False, collect_env=False,
                       progress=False, batch=batch)
    return execute_bundle(bundle, out, opts)


def _found(report: dict) -> set:
    return {(f["kind"], f["variant"]) for f in report["findings"] if f.get("repro")} | \
        {(f["kind"], v) for f in report["findings"] if f.get("repro") for v in f.get("also_seen_in", [])}


def test_injected_fault_is_found_and_confirmed_in_batch_mode_like_unbatched(bundle, tmp_path):
    plain = _execute(bundle, tmp_path / "plain", batch=1)
    batched = _execute(bundle, tmp_path / "batched", batch=4)
    found = _found(plain)
    # the fault is in relu: the seed and every variant that kept torch.relu miscompile
    assert ("seed-miscompile", "g0_seed") in found
    assert len(found) > 1  # ... folded into the seed's finding (they fail like it)
    st = batched["stats"]["batch"]
    assert st["k"] == 4 and st["batches"] >= 1
    # every variant that kept relu fails as the seed's own task did (one worker: the seed ran first): its batch
    # verdict stands, folded into the seed's finding, with no compile of its own
    assert st["failed_as_seed"] >= 1 and st["confirm_tasks"] == st["confirmed"] + st["unconfirmed"]
    assert st["cleared_in_batch"] >= 1  # variants without relu pass inside the batch
    assert _found(batched) == found
    assert batched["executed"] == plain["executed"]

"""Tests of runners/findings/minimize.py and runners/findings/shrink.py: the stored program
(lowering/bundle.py), the moves on the program IR, the search (with a stand-in checker),
signature/dedupe of minimized findings, and one real check in a worker subprocess."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.fx
from conftest import TEST_MODELS

import eqsat_test.runners.findings.minimize as M
import eqsat_test.runners.findings.shrink as S
from eqsat_test.lowering.bundle import (
    PROGRAM_FORMAT,
    StoredProgram,
    program_file_name,
    program_from_json,
    program_to_json,
    read_program,
    write_program,
)
from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.manifest import Manifest
from eqsat_test.lowering.program import CALL, INPUT, Program, TensorMeta
from eqsat_test.runners.exec.pool import PoolOptions
from eqsat_test.runners.findings.rootcause import dedupe
from eqsat_test.runners.findings.write import signature
from eqsat_test.runners.protocol import load_module
from eqsat_test.runners.records import Finding, Result, ResultStatus, Task


def _stored(fn, inputs, *, dynamo=False) -> StoredProgram:
    """fn's program: symbolic_trace (no TensorMeta) or Dynamo capture (TensorMeta on every value)."""
    gm = capture(fn, tuple(inputs))[0].gm if dynamo else torch.fx.symbolic_trace(fn)
    lg = lift_fx(gm)
    return StoredProgram(lg.program, lg.input_names, "g0.inputs.pt", "test", ("rules applied: (none)",))


def _emit(fn, inputs, tmp_path: Path, name="g0_v001.py", dynamo=False) -> Path:
    """A bundle-like folder: the module, its stored program beside it, and the inputs file."""
    sp = _stored(fn, inputs, dynamo=dynamo)
    torch.save(list(inputs), tmp_path / "g0.inputs.pt")
    (tmp_path / name).write_text(sp.render())
    write_program(tmp_path / program_file_name(name), sp)
    return tmp_path / name


def _run(sp: StoredProgram, tmp_path: Path, name: str):
    (tmp_path / name).write_text(sp.render())
    mod = load_module(str(tmp_path / name))
    return mod, mod.forward(*mod.get_inputs())


def chain(x, w):
    a = torch.nn.functional.linear(x, w)
    b = torch.relu(a)
    c = b.t()
    d = c.contiguous()
    e = torch.sigmoid(d) * d
    f = e.sum(dim=0)
    return f, torch.tanh(x) + 1.0


CHAIN_INPUTS = (torch.randn(4, 8), torch.randn(6, 8))
CHAIN_OPS = ["torch._C._nn.linear", "torch.relu", "Tensor.t", "Tensor.contiguous", "torch.sigmoid",
             "operator.mul", "Tensor.sum", "torch.tanh", "operator.add"]


def _node(p: Program, target: str) -> int:
    return next(i for i, n in enumerate(p.nodes) if n.kind == CALL and n.name == target)


# ----------------------------------------------------------------------------------------------
# the stored program


@pytest.mark.parametrize("dynamo", [False, True])
def test_stored_program_round_trips(dynamo):
    sp = _stored(chain, CHAIN_INPUTS, dynamo=dynamo)
    d = json.loads(json.dumps(sp.to_json()))
    assert d["format"] == PROGRAM_FORMAT
    back = StoredProgram.from_json(d)
    assert back == sp and back.program.meta == sp.program.meta and back.program.key() == sp.program.key()
    assert back.render() == sp.render()
    if dynamo:
        assert any(m is not None for m in back.program.meta)


def test_stored_program_refuses_what_it_cannot_read(tmp_path):
    sp = _stored(chain, CHAIN_INPUTS)
    d = sp.to_json()
    with pytest.raises(ValueError, match="unsupported program format"):
        StoredProgram.from_json({**d, "format": "eqsat-program/99"})
    bad = program_to_json(sp.program)
    bad["nodes"][0] = ["call", "torch.relu", [len(bad["nodes"]) - 1], []]  # an argument from later on
    with pytest.raises(ValueError, match="earlier node"):
        program_from_json(bad)
    with pytest.raises(ValueError):
        StoredProgram.from_json({"format": PROGRAM_FORMAT, "nodes": []})
    (tmp_path / "x.program.json").write_text("{not json")
    with pytest.raises(ValueError, match="not JSON"):
        read_program(tmp_path / "x.program.json")
    assert program_file_name("g0_v001.py") == "g0_v001.program.json"


# ----------------------------------------------------------------------------------------------
# the moves (pure, on Program)


@pytest.mark.parametrize("dynamo", [False, True])
def test_value_meta_from_the_program_or_one_eager_run(dynamo):
    sp = _stored(chain, CHAIN_INPUTS, dynamo=dynamo)
    p = sp.program
    meta = S.value_meta(p, sp.input_names, list(CHAIN_INPUTS))
    x = next(i for i, n in enumerate(p.nodes) if n.kind == INPUT and n.name == sp.input_names[0])
    assert meta[x] == TensorMeta((4, 8), "float32")
    assert meta[_node(p, "Tensor.t")] == TensorMeta((6, 4), "float32")
    assert meta[_node(p, "Tensor.sum")] == TensorMeta((4,), "float32")


def test_moves_keep_programs_valid(tmp_path):
    sp = _stored(chain, CHAIN_INPUTS)
    torch.save(list(CHAIN_INPUTS), tmp_path / "g0.inputs.pt")
    p = S.with_meta(sp.program, S.value_meta(sp.program, sp.input_names, list(CHAIN_INPUTS)))
    assert p.ops() == CHAIN_OPS
    one = S.keep_outputs(p, [1])
    assert one.ops() == ["torch.tanh", "operator.add"] and len(S.output_items(one)) == 1
    assert {p.nodes[i].name for i in range(len(p.nodes)) if p.nodes[i].kind == INPUT} == {"x", "w"}
    cut = S.cut_at(p, _node(p, "torch.relu"))
    assert cut.ops() == ["torch._C._nn.linear", "torch.relu"]
    meta = S.meta_of(p)
    choices = S.bypass_choices(p, meta, list(sp.input_names))
    relu, lin, t, cont = (_node(p, n) for n in ("torch.relu", "torch._C._nn.linear", "Tensor.t", "Tensor.contiguous"))
    assert choices[relu] == lin  # its own argument, same shape and dtype
    assert choices[cont] == t
    assert t not in choices  # (6, 4) has no same-shaped operand or input
    by = S.bypass(p, {relu: lin, cont: t})
    assert "torch.relu" not in by.ops() and "Tensor.contiguous" not in by.ops()
    assert S.meta_of(by)  # Program.meta travels with the moves
    x = next(i for i, n in enumerate(p.nodes) if n.kind == INPUT and n.name == "x")
    assert choices[_node(p, "torch.tanh")] == x
    to_input = S.bypass(p, {_node(p, "operator.add"): x})
    assert "torch.tanh" not in to_input.ops()  # what only fed the bypassed op dies
    want = chain(*CHAIN_INPUTS)
    for i, q in enumerate((one, cut, by, to_input, S.compact(p))):
        mod, out = _run(sp.with_program(q), tmp_path, f"m{i}.py")
        assert isinstance(out, tuple)
    _, out = _run(sp.with_program(S.compact(p)), tmp_path, "same.py")
    assert all(torch.equal(a, b) for a, b in zip(out, want))
    with pytest.raises(ValueError):  # a value may only be replaced by an input or an earlier value
        S.bypass(p, {lin: relu})


def test_bypass_looks_through_argument_lists():
    def cat2(x, y):
        return (torch.cat([x.relu(), y], dim=0),)

    p = _stored(cat2, (torch.randn(2, 3), torch.randn(2, 3))).program
    cat = _node(p, "torch.cat")
    assert [p.nodes[i].name for i in S.tensor_operands(p, cat)] == ["Tensor.relu", "y"]


def test_index_sources_follow_the_outputs(tmp_path):
    def idx(x):
        y = x * 2.0
        v, i = torch.topk(y, 3, dim=1)
        return v, i, torch.argmax(y, dim=1), y.argsort(dim=0)

    x = torch.randint(0, 3, (5, 6)).float()
    sp = _stored(idx, (x,))
    torch.save([x], tmp_path / "g0.inputs.pt")
    mod, _ = _run(sp, tmp_path, "full.py")
    want = mod.index_sources(*mod.get_inputs())
    assert set(want) == {"[1]", "[2]", "[3]"}
    # After keeping only the argmax output, its index source is at [0].
    m2, _ = _run(sp.with_program(S.keep_outputs(sp.program, [2])), tmp_path, "only.py")
    got = m2.index_sources(*m2.get_inputs())
    assert set(got) == {"[0]"} and torch.equal(got["[0]"][0], want["[2]"][0])


def test_not_minimizable_without_a_stored_program(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    (tmp_path / program_file_name(f.name)).unlink()
    finding = Finding(kind="miscompile", variant="g0_v001", leaf="[0]", input_set="given")
    with pytest.raises(M.NotMinimizable, match="no stored program"):
        M.minimize(f, finding, BASE, FakePool(lambda s: True), tmp_path / "w")
    (tmp_path / program_file_name(f.name)).write_text('{"format": "eqsat-program/0"}')
    with pytest.raises(M.NotMinimizable, match="unsupported program format"):
        M.minimize(f, finding, BASE, FakePool(lambda s: True), tmp_path / "w")


# ----------------------------------------------------------------------------------------------
# the search


class FakePool:
    """Stands in for CheckPool: a candidate 'fails' when `pred(forward source)` is true."""

    def __init__(self, pred, jobs=2):
        self.pred, self.width, self.cache, self.checks, self.seen = pred, jobs, {}, 0, []

    def run(self, tasks):
        out = []
        for t in tasks:
            src = Path(t.file).read_text()
            fwd = src.split("def forward", 1)[1].split("def index_sources", 1)[0]
            self.seen.append(fwd)
            bad = self.pred(fwd)
            out.append(Result(status=ResultStatus.OK, input_sets=[{
                "name": "given", "kind": "mismatch" if bad else "match", "ok": not bad, "detail": f"{len(fwd)} chars fail"}]))
        self.checks += len(tasks)
        return out


BASE = Task(backend="inductor", device="cpu", seed=0, input_kinds=["given"], is_param=[False, True])


def test_minimize_search_finds_the_small_program(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    pool = FakePool(lambda fwd: "torch.relu(" in fwd)
    finding = Finding(kind="miscompile", variant="g0_v001", leaf="[0]", input_set="given")
    res = M.minimize(f, finding, BASE, pool, tmp_path / "work", max_checks=12)
    assert res.file is not None and res.checks <= 12
    assert res.ops == ["torch._C._nn.linear", "torch.relu"]
    assert res.steps and "minimized by eqsat-test from g0_v001.py" in res.source
    # the minimized program's own verdict is kept (its repro.py and test_repro.py say this one)
    fwd = res.source.split("def forward", 1)[1].split("def index_sources", 1)[0]
    assert (res.detail, res.input_set) == (f"{len(fwd)} chars fail", "given")
    mod = load_module(str(res.file))
    assert len(mod.forward(*mod.get_inputs())) == 1


def test_minimize_respects_the_budget_and_kind(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    pool = FakePool(lambda fwd: True)
    finding = Finding(kind="miscompile", variant="g0_v001", leaf="[0]", input_set="given")
    res = M.minimize(f, finding, BASE, pool, tmp_path / "w1", max_checks=3)
    assert res.checks <= 3 and pool.checks <= 3
    # Nothing fails: the original program stays, no minimized file.
    pool2 = FakePool(lambda fwd: False)
    res2 = M.minimize(f, finding, BASE, pool2, tmp_path / "w2", max_checks=12)
    assert res2.file is None and res2.ops == CHAIN_OPS and res2.source == f.read_text()
    # Timeouts are not minimized (each check could cost a whole timeout).
    res3 = M.minimize(f, {"kind": "timeout", "variant": "g0_v001"}, BASE, FakePool(lambda s: True), tmp_path / "w3")
    assert res3.checks == 0 and res3.file is None


def test_minimize_stops_at_its_deadline(tmp_path):
    """act_ssm_zoh_discretize's cpu job in a corpus campaign: its 12 minimizing checks took 88 s alone and 297 s
    beside other work, and the job never ended inside the campaign's 560 s runs. No check starts after
    the deadline; the smallest failing program so far stands (here: the first check's)."""
    import time
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    finding = Finding(kind="miscompile", variant="g0_v001", leaf="[0]", input_set="given")
    late = FakePool(lambda fwd: True)
    res = M.minimize(f, finding, BASE, late, tmp_path / "w0", max_checks=12, deadline=time.monotonic() - 1)
    assert res.checks == 0 and late.checks == 0 and res.file is None

    class SlowPool(FakePool):
        def run(self, tasks):
            time.sleep(0.3)
            return super().run(tasks)
    slow = SlowPool(lambda fwd: "torch.relu(" in fwd, jobs=1)
    res = M.minimize(f, finding, BASE, slow, tmp_path / "w1", max_checks=12, deadline=time.monotonic() + 0.2)
    assert slow.checks == 1 and res.checks == 1


def test_minimize_keeps_the_failure_kind(tmp_path):
    """A compile crash is not 'the same way' as a miscompile (and vice versa)."""
    f = _emit(chain, CHAIN_INPUTS, tmp_path)

    class CrashPool(FakePool):
        def run(self, tasks):
            self.checks += len(tasks)
            return [Result(status=ResultStatus.COMPILE_CRASH, error={"type": "CppCompileError"}) for _ in tasks]

    finding = Finding(kind="miscompile", variant="g0_v001", leaf="[0]", input_set="given")
    res = M.minimize(f, finding, BASE, CrashPool(None), tmp_path / "w", max_checks=6)
    assert res.file is None
    crash = Finding(kind="compile-crash", variant="g0_v001", error={"type": "CppCompileError"})
    res2 = M.minimize(f, crash, BASE, CrashPool(None), tmp_path / "w2", max_checks=6)
    assert res2.file is not None and len(res2.ops) < len(CHAIN_OPS)


def test_the_findings_of_a_run_share_one_queue_that_every_worker_serves(monkeypatch):
    """CheckPool: the checks of findings minimized at once run on the run's warm workers together (as many at a time
    as there are workers), each on the worker that is free; the workers go back to the pool at the end."""
    import threading
    import time

    running, peak, released = [0], [0], []
    lock = threading.Lock()

    class Worker:
        def __init__(self, k):
            self.k = k

        def run(self, t):
            with lock:
                running[0] += 1
                peak[0] = max(peak[0], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1
            return Result(status=ResultStatus.OK, task=t.id, more={"worker": self.k})

    monkeypatch.setattr(M, "worker", lambda k, opts, log=None: Worker(k))
    monkeypatch.setattr(M, "release", released.append)
    pool = M.CheckPool(PoolOptions(jobs=3))
    tasks = [[Task(id=f"f{j}:c{i}", variant="v", backend="b", device="cpu") for i in range(4)] for j in range(2)]
    got: dict = {}
    threads = [threading.Thread(target=lambda j=j: got.__setitem__(j, pool.run(tasks[j]))) for j in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    pool.close()
    assert [[r.task for r in got[j]] for j in range(2)] == [[t.id for t in tasks[j]] for j in range(2)]
    assert peak[0] == 3 and pool.checks == 8 and len(released) == 3


def test_outcome_classification():
    def outcome(d: dict) -> tuple:
        return M.outcome(Result.from_dict(d))
    assert outcome({"status": "ok", "input_sets": [{"ok": True, "kind": "match"}]}) == ("ok",)
    assert outcome({"status": "ok", "input_sets": [{"ok": False, "kind": "mismatch"}]}) == ("miscompile",)
    assert outcome({"status": "ok", "input_sets": [{"ok": True, "kind": "nondeterministic"},
                                                   {"ok": False, "kind": "mismatch"}]}) == ("nondeterministic",)
    assert outcome({"status": "process-crash", "error": {"type": "ProcessCrash"}}) == ("run-crash", "ProcessCrash")
    assert M.target_outcome({"kind": "seed-miscompile"}) == ("miscompile",)


def _finding(variant, kind, rules, min_ops=None):
    f = {"kind": kind, "variant": variant, "backend": "inductor", "device": "cpu", "rules": rules,
         "ops": ["torch.relu", "operator.add", "Tensor.tanh"]}
    return Finding.from_dict({**f, "min_ops": min_ops})


def test_one_bug_in_many_variants_is_one_finding():
    mins = ["torch._C._nn.linear", "torch.nn.functional.relu"]
    fs = [_finding("g0_seed", "seed-miscompile", [], mins), _finding("g0_v001", "miscompile", ["a"], mins),
          _finding("g0_v002", "miscompile", ["a", "b"], mins), _finding("g0_v003", "miscompile", ["c"], list(reversed(mins)))]
    out = dedupe(fs)
    assert len(out) == 1
    assert out[0].variant == "g0_seed" and out[0].count == 4
    assert sorted(out[0].also_seen_in) == ["g0_v001", "g0_v002", "g0_v003"]
    # A different minimized op pattern is a different bug.
    other = _finding("g0_v004", "miscompile", ["a"], ["torch.sigmoid"])
    assert len(dedupe(fs + [other])) == 2
    # Unminimized findings keep the rules in the signature (their op list is the whole graph's).
    assert signature(_finding("g0_v001", "miscompile", ["a"])) != signature(_finding("g0_v002", "miscompile", ["b"]))


def test_spellings_of_one_op_are_one_bug():
    a = _finding("g0_v001", "miscompile", ["a"], ["torch._C._nn.linear", "torch.relu"])
    b = _finding("g0_v002", "miscompile", ["b"], ["torch._C._nn.linear", "torch.nn.functional.relu"])
    c = _finding("g0_v003", "miscompile", ["c"], ["torch._C._nn.linear", "Tensor.relu"])
    assert signature(a) == signature(b) == signature(c)
    d = _finding("g0_v004", "compile-crash", ["c"], ["torch._C._nn.linear", "Tensor.relu"])
    assert signature(d) != signature(c)


def test_seed_represents_the_bug_even_when_found_later():
    mins = ["torch.relu"]
    out = dedupe([_finding("g0_v001", "miscompile", ["a"], mins), _finding("g0_seed", "seed-miscompile", [], mins)])
    assert len(out) == 1 and out[0].variant == "g0_seed" and out[0].also_seen_in == ["g0_v001"]


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_real_check_in_a_worker(tmp_path):
    """One real minimization against Inductor's injected relu bug, checked in worker subprocesses."""
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    backend = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"'
    pool = M.CheckPool(PoolOptions(jobs=1, timeout=240))
    try:
        finding = Finding(kind="miscompile", variant="g0_v001", leaf="[0]", input_set="given")
        res = M.minimize(f, finding, BASE.with_(backend=backend, is_param=[False, False]), pool,
                         tmp_path / "work", max_checks=4)
    finally:
        pool.close()
    assert res.file is not None, res
    assert "torch.relu" in res.ops and len(res.ops) < len(CHAIN_OPS)
    assert res.failing_inputs and Path(res.failing_inputs).is_file()


def test_generated_bundles_store_each_program_and_minimize_from_it(tmp_path):
    """Generation writes `<id>.program.json` beside each module (listed in the manifest) whose
    rendering is the module; a variant (no TensorMeta: shapes from one eager run) minimizes."""
    from eqsat_test.rewrite.generate import GenerateOptions, generate  # needs egglog: generation, not execution
    m = generate(TEST_MODELS / "relu_mlp.py", tmp_path / "b",
                 GenerateOptions(variants=2, rules=(str(TEST_MODELS / "e2e_rules"),)))
    assert len(m.variants) >= 2
    for v in m.variants:
        assert v.program == program_file_name(v.file)
        sp = read_program(tmp_path / "b" / v.program)
        assert sp.render() == (tmp_path / "b" / v.file).read_text()
        assert sp.program.key() == v.key
    v = next(v for v in m.variants if not v.seed)
    pool = FakePool(lambda fwd: "relu" in fwd)
    finding = Finding(kind="miscompile", variant=v.id, leaf="[0]", input_set="given")
    res = M.minimize(tmp_path / "b" / v.file, finding, BASE.with_(is_param=[False] * 5), pool,
                     tmp_path / "w", program_file=tmp_path / "b" / v.program)
    assert res.file is not None and any("relu" in o for o in res.ops) and len(res.ops) < v.ops


def test_repro_of_a_minimized_program_states_its_own_verdict():
    from eqsat_test.runners.findings.write import _repro_source
    f = Finding(kind="miscompile", backend="inductor", device="cpu", detail="whole variant: 9 differ",
                input_set="special-0", min_detail="minimized: 3 differ", min_input_set="given")
    src = 'import torch\ndef forward(x):\n    return (x,)\n\nif __name__ == "__main__":\n    pass\n'
    text = _repro_source(src, f, minimized=True)
    assert "verdict: minimized: 3 differ" in text and "input set: given" in text and "9 differ" not in text
    assert "verdict: whole variant: 9 differ" in _repro_source(src, f)


def test_a_known_crash_keeps_its_program_unless_asked(tmp_path, monkeypatch):
    """A crash that matches a ledger entry is not shrunk (the ledger's repro is its minimal program, and its crash
    site keys its cluster); --minimize-known shrinks it, and a known miscompile is shrunk as ever (its pattern
    keys its cluster across models)."""
    from eqsat_test.runners.findings.clusters import clustered
    from eqsat_test.runners.findings.ledger import LedgerEntry
    from eqsat_test.runners.pipeline import ExecOptions
    entries = [LedgerEntry(id=99, title="abs crashes", repro="abs.py", devices=("cpu",), ops=(("abs",),), symptom="crash"),
               LedgerEntry(id=98, title="abs is wrong", repro="abs2.py", devices=("cpu",), ops=(("abs",),))]
    msg = "TypeError: expecting bool or Boolean, not `-oo`."
    base = {"variant": "g0_v001", "graph": "g0", "backend": "inductor", "device": "cpu", "rules": ["r"],
            "ops": ["torch.abs"], "cone_ops": ["torch.abs"], "input_set": "given", "id": "f1", "confirmed": True}
    seen = []
    monkeypatch.setattr(M, "minimize_findings", lambda fs, *a, **k: seen.extend(f.id for f in fs) or fs)

    def run(finding, **opts):
        seen.clear()
        finding = Finding.from_dict(finding)
        [labelled], clusters = clustered([finding], "m.py", entries)
        assert clusters[0].ledger == ((99,) if finding.kind == "compile-crash" else (98,))
        [f], reps, _ = M.minimize_clusters([labelled], clusters, tmp_path, Manifest(), [],
                                           ExecOptions(**opts), tmp_path / "w")
        return f, reps

    crash = {**base, "kind": "compile-crash", "leaf": None, "detail": msg, "error": {"type": "InductorError",
                                                                                   "message": msg}}
    f, reps = run(crash)
    assert reps == [] and seen == []
    assert f.min_skipped.startswith("known: ledger #99") and "--minimize-known" in f.min_skipped
    f, reps = run(crash, minimize_known=True)
    assert [r.id for r in reps] == ["f1"] and seen == ["f1"]
    wrong = {**base, "kind": "miscompile", "leaf": "[0]", "detail": "[0] float32[4]: 1 exceed the fp64 bound"}
    f, reps = run(wrong)
    assert [r.id for r in reps] == ["f1"] and f.min_skipped is None


def test_op_labels_name_floor_and_trunc_division_and_a_multiplication_by_zero():
    """`div(x, y, rounding_mode="floor")` is floor division and `rounding_mode="trunc"` truncating division: their
    op labels say so (the ledger's entries name `floor_divide` and `trunc_divide`), and a plain `div` keeps its
    name; `ops()`, what rules match on, keeps the target."""
    def f(x):
        return (torch.div(x, 0.001, rounding_mode="floor"), torch.div(x, 3.0, rounding_mode="trunc"),
                torch.div(x, 2.0), x.div(0.5, rounding_mode="floor"))
    p = _stored(f, (torch.randn(4),)).program
    assert sorted(p.op_labels()) == ["Tensor.floor_divide", "torch.div", "torch.floor_divide", "torch.trunc_divide"]
    assert sorted(p.ops()) == ["Tensor.div", "torch.div", "torch.div", "torch.div"]

    def g(x):
        return x * 0, 0.0 * x, torch.mul(x, 0), x * 2, x.mul(1e-30)
    q = _stored(g, (torch.randn(4),)).program
    assert sorted(q.op_labels()) == ["Tensor.mul", "operator.mul", "operator.mul_by_zero", "operator.mul_by_zero",
                                    "torch.mul_by_zero"]

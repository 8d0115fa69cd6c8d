"""Tests of runners/findings/minimize.py: reading emitted variants, the moves, the search (with a stand-in
checker), signature/dedupe of minimized findings, and one real check in a worker subprocess."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.fx

from lowering.emit import emit_module
import runners.findings.minimize as M
from runners.exec.pool import PoolOptions
from runners.findings.write import signature
from runners.findings.rootcause import dedupe


def _emit(fn, inputs, tmp_path: Path, name="g0_v001.py") -> Path:
    gm = torch.fx.symbolic_trace(fn)
    params = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    src = emit_module(gm, title="test", inputs_file="g0.inputs.pt", input_names=params)
    torch.save(list(inputs), tmp_path / "g0.inputs.pt")
    (tmp_path / name).write_text(src)
    return tmp_path / name


def chain(x, w):
    a = torch.nn.functional.linear(x, w)
    b = torch.relu(a)
    c = b.t()
    d = c.contiguous()
    e = torch.sigmoid(d) * d
    f = e.sum(dim=0)
    return f, torch.tanh(x) + 1.0


CHAIN_INPUTS = (torch.randn(4, 8), torch.randn(6, 8))


def test_parse_emitted_module_and_op_names(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    prog, _ = M.parse_module(f.read_text())
    assert prog.params == ("x", "w")
    assert len(prog.outputs) == 2
    ops = prog.op_names()
    assert "torch._C._nn.linear" in ops and "torch.relu" in ops
    assert "Tensor.t" in ops and "Tensor.contiguous" in ops and "operator.mul" in ops
    assert "Tensor.sum" in ops and "operator.add" in ops


def test_render_round_trip_runs_the_same(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    src = f.read_text()
    prog, _ = M.parse_module(src)
    again = M.render_module(src, prog, note="minimized")
    (tmp_path / "again.py").write_text(again)
    a, b = M._load_module(f), M._load_module(tmp_path / "again.py")
    for x, y in zip(a.forward(*a.get_inputs()), b.forward(*b.get_inputs())):
        assert torch.equal(x, y)
    assert "# minimized" in again


def test_moves_keep_programs_valid(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    src = f.read_text()
    prog, _ = M.parse_module(src)
    meta = M.value_meta(f, prog)
    assert meta["x"] == ((4, 8), torch.float32)
    one = M.keep_outputs(prog, [1])
    assert [s.name for s in one.stmts] == [s.name for s in prog.stmts if s.name in {"tanh", "add"}]
    cut = M.cut_at(prog, "relu")
    assert cut.op_names() == ["torch._C._nn.linear", "torch.relu"]
    choices = M.bypass_choices(prog, meta)
    assert choices["relu"] == "linear"  # its own argument, same shape and dtype
    assert choices["contiguous"] == "t"
    assert "t" not in choices  # (6, 4) has no same-shaped argument or input
    by = M.bypass(prog, {"relu": "linear", "contiguous": "t"})
    assert "torch.relu" not in by.op_names() and "Tensor.contiguous" not in by.op_names()
    for i, p in enumerate((one, cut, by)):
        (tmp_path / f"m{i}.py").write_text(M.render_module(src, p))
        mod = M._load_module(tmp_path / f"m{i}.py")
        mod.forward(*mod.get_inputs())


def test_index_sources_follow_the_outputs(tmp_path):
    def idx(x):
        y = x * 2.0
        v, i = torch.topk(y, 3, dim=1)
        return v, i, torch.argmax(y, dim=1), y.argsort(dim=0)

    f = _emit(idx, (torch.randint(0, 3, (5, 6)).float(),), tmp_path)
    src = f.read_text()
    prog, _ = M.parse_module(src)
    mod = M._load_module(f)
    want = mod.index_sources(*mod.get_inputs())
    (tmp_path / "same.py").write_text(M.render_module(src, prog))
    same = M._load_module(tmp_path / "same.py")
    got = same.index_sources(*same.get_inputs())
    assert set(got) == set(want) == {"[1]", "[2]", "[3]"}
    for k in want:
        assert torch.equal(got[k][0], want[k][0]) and got[k][1] == want[k][1]
    # After keeping only the argmax output, its index source is at [0].
    only = M.keep_outputs(prog, [2])
    (tmp_path / "only.py").write_text(M.render_module(src, only))
    m2 = M._load_module(tmp_path / "only.py")
    assert set(m2.index_sources(*m2.get_inputs())) == {"[0]"}


def test_not_minimizable_inputs():
    with pytest.raises(M.NotMinimizable):
        M.parse_module("def forward(x):\n    if x: pass\n    return (x,)\ndef index_sources(x):\n    return {}\n")
    with pytest.raises(M.NotMinimizable):
        M.parse_module("x = (")


class FakePool:
    """Stands in for CheckPool: a candidate 'fails' when `pred(forward source)` is true."""

    def __init__(self, pred, jobs=2):
        self.pred, self.workers, self.cache, self.checks, self.seen = pred, [None] * jobs, {}, 0, []

    def run(self, tasks):
        out = []
        for t in tasks:
            src = Path(t["file"]).read_text()
            fwd = src.split("def forward", 1)[1].split("def index_sources", 1)[0]
            self.seen.append(fwd)
            bad = self.pred(fwd)
            out.append({"status": "ok", "input_sets": [{"name": "given", "kind": "mismatch" if bad else "match",
                                                         "ok": not bad}]})
        self.checks += len(tasks)
        return out


BASE = {"backend": "inductor", "device": "cpu", "seed": 0, "input_kinds": ["given"], "is_param": [False, True]}


def test_minimize_search_finds_the_small_program(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    pool = FakePool(lambda fwd: "torch.relu(" in fwd)
    finding = {"kind": "miscompile", "variant": "g0_v001", "leaf": "[0]", "input_set": "given"}
    res = M.minimize(f, finding, BASE, pool, tmp_path / "work", max_checks=12)
    assert res.file is not None and res.checks <= 12
    assert res.ops == ["torch._C._nn.linear", "torch.relu"]
    prog, _ = M.parse_module(res.source)
    assert len(prog.outputs) == 1
    mod = M._load_module(res.file)
    mod.forward(*mod.get_inputs())


def test_minimize_respects_the_budget_and_kind(tmp_path):
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    pool = FakePool(lambda fwd: True)
    finding = {"kind": "miscompile", "variant": "g0_v001", "leaf": "[0]", "input_set": "given"}
    res = M.minimize(f, finding, BASE, pool, tmp_path / "w1", max_checks=3)
    assert res.checks <= 3 and pool.checks <= 3
    # Nothing fails: the original program stays, no minimized file.
    pool2 = FakePool(lambda fwd: False)
    res2 = M.minimize(f, finding, BASE, pool2, tmp_path / "w2", max_checks=12)
    assert res2.file is None and res2.ops == M.parse_module(f.read_text())[0].op_names()
    # Timeouts are not minimized (each check could cost a whole timeout).
    res3 = M.minimize(f, {"kind": "timeout", "variant": "g0_v001"}, BASE, FakePool(lambda s: True), tmp_path / "w3")
    assert res3.checks == 0 and res3.file is None


def test_minimize_keeps_the_failure_kind(tmp_path):
    """A compile crash is not 'the same way' as a miscompile (and vice versa)."""
    f = _emit(chain, CHAIN_INPUTS, tmp_path)

    class CrashPool(FakePool):
        def run(self, tasks):
            self.checks += len(tasks)
            return [{"status": "compile-crash", "input_sets": [], "error": {"type": "CppCompileError"}} for _ in tasks]

    finding = {"kind": "miscompile", "variant": "g0_v001", "leaf": "[0]", "input_set": "given"}
    res = M.minimize(f, finding, BASE, CrashPool(None), tmp_path / "w", max_checks=6)
    assert res.file is None
    crash = {"kind": "compile-crash", "variant": "g0_v001", "error": {"type": "CppCompileError"}}
    res2 = M.minimize(f, crash, BASE, CrashPool(None), tmp_path / "w2", max_checks=6)
    assert res2.file is not None and len(res2.ops) < len(M.parse_module(f.read_text())[0].op_names())


def test_outcome_classification():
    assert M.outcome({"status": "ok", "input_sets": [{"ok": True, "kind": "match"}]}) == ("ok",)
    assert M.outcome({"status": "ok", "input_sets": [{"ok": False, "kind": "mismatch"}]}) == ("miscompile",)
    assert M.outcome({"status": "ok", "input_sets": [{"ok": True, "kind": "nondeterministic"},
                                                     {"ok": False, "kind": "mismatch"}]}) == ("nondeterministic",)
    assert M.outcome({"status": "process-crash", "error": {"type": "ProcessCrash"}}) == ("run-crash", "ProcessCrash")
    assert M.target_outcome({"kind": "seed-miscompile"}) == ("miscompile",)


def _finding(variant, kind, rules, min_ops=None):
    f = {"kind": kind, "variant": variant, "backend": "inductor", "device": "cpu", "rules": rules,
         "ops": ["torch.relu", "operator.add", "Tensor.tanh"]}
    if min_ops is not None:
        f["min_ops"] = min_ops
    return f


def test_one_bug_in_many_variants_is_one_finding():
    mins = ["torch._C._nn.linear", "torch.nn.functional.relu"]
    fs = [_finding("g0_seed", "seed-miscompile", [], mins), _finding("g0_v001", "miscompile", ["a"], mins),
          _finding("g0_v002", "miscompile", ["a", "b"], mins), _finding("g0_v003", "miscompile", ["c"], list(reversed(mins)))]
    out = dedupe(fs)
    assert len(out) == 1
    assert out[0]["variant"] == "g0_seed" and out[0]["count"] == 4
    assert sorted(out[0]["also_seen_in"]) == ["g0_v001", "g0_v002", "g0_v003"]
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
    assert len(out) == 1 and out[0]["variant"] == "g0_seed" and out[0]["also_seen_in"] == ["g0_v001"]


def test_real_check_in_a_worker(tmp_path):
    """One real minimization against Inductor's injected relu bug, checked in worker subprocesses."""
    f = _emit(chain, CHAIN_INPUTS, tmp_path)
    backend = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"'
    pool = M.CheckPool(PoolOptions(jobs=1, timeout=240))
    try:
        finding = {"kind": "miscompile", "variant": "g0_v001", "leaf": "[0]", "input_set": "given"}
        res = M.minimize(f, finding, {**BASE, "backend": backend, "is_param": [False, False]}, pool,
                         tmp_path / "work", max_checks=4)
    finally:
        pool.close()
    assert res.file is not None, res
    assert "torch.relu" in res.ops and len(res.ops) < len(M.parse_module(f.read_text())[0].op_names())
    assert res.failing_inputs and Path(res.failing_inputs).is_file()

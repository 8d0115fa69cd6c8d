"""Typed records (runners/records.py): the one constructor of findings and notes, and the round trip
of the dicts it makes (as results.json holds them) through `Finding`; worker results (`Result`,
`ResultStatus`) as every producer makes them, round-tripped as the wire and results.json carry them."""
from __future__ import annotations

import ast
import dataclasses
import json
import sys
from pathlib import Path

import pytest
from conftest import REPO, TEST_MODELS

from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.judging import judge_results
from eqsat_test.runners.records import (
    COMPILER_BUG_KINDS,
    RESULTS_SCHEMA_VERSION,
    Finding,
    FindingKind,
    InputSetVerdict,
    Result,
    ResultDraft,
    ResultStatus,
    RunResults,
    Task,
    TaskKind,
    new_finding,
)

BASE = {"variant": "g0_v1", "graph": "g0", "backend": "inductor", "device": "cpu", "rules": ["r1"],
        "mode": "uniform", "ops": ["aten.relu"], "seed": False}


def _round_trips(d: dict) -> None:
    rec = Finding.from_dict(d)
    assert rec.to_dict() == d and list(rec.to_dict()) == list(d)
    assert FindingKind.parse(rec.kind).value == d["kind"]
    assert rec.compiler_bug == (d["kind"] in COMPILER_BUG_KINDS)


def test_new_finding_keeps_the_dict_literal_shape():
    """Parts first, then "kind", then the fields; a field a part has keeps the part's position."""
    f = new_finding(FindingKind.MISCOMPILE, BASE, input_set="random", detail="x")
    assert f.to_dict() == {**BASE, "kind": "miscompile", "input_set": "random", "detail": "x"}
    assert Finding.from_dict(f.to_dict()).to_dict() == f.to_dict()
    assert type(f.kind) is str  # json.dumps writes it as before
    g = new_finding(FindingKind.CONFIG_MISMATCH, BASE, {"failing_inputs": None}, backend="inductor+x")
    assert g.to_dict() == {**BASE, "kind": "config-mismatch", "backend": "inductor+x"}  # None: no key
    assert g.backend == "inductor+x"
    n = new_finding(FindingKind.SLOW_VARIANT, variant="v", backend="b", device="cpu")
    assert list(n.to_dict()) == ["variant", "backend", "device", "kind"]  # the fields in order
    for d in (f.to_dict(), g.to_dict(), n.to_dict()):
        _round_trips(d)


def test_unknown_kind_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown finding kind 'miscompiled'.*known kinds:.*seed-miscompile"):
        new_finding("miscompiled", BASE)
    with pytest.raises(ValueError, match="unknown finding kind"):
        FindingKind.parse("process-crash")
    with pytest.raises(ValueError, match="unknown finding kind None"):
        new_finding(None, BASE)
    # a known kind as a plain string is refused too: creation sites name a FindingKind member
    with pytest.raises(TypeError, match=r"plain string.*FindingKind\.parse"):
        new_finding("miscompile", BASE)
    assert FindingKind.parse("run-crash") is FindingKind.RUN_CRASH


def test_judged_findings_and_notes_round_trip(tmp_path):
    """judge_results' findings and notes of every status: made by new_finding, read back by Finding."""
    variants = tuple(Variant(f"g0_v{i}", "g0", f"g0_v{i}.py", seed=i == 0, rules=() if i == 0 else (f"r{i}",),
                             mode="uniform") for i in range(6))
    manifest = Manifest(variants=variants, graphs=(Graph("g0", op_names=("aten.relu",)),))
    err = {"type": "RuntimeError", "message": "boom"}
    base = {"backend": "inductor", "device": "cpu"}
    results = [
        {**base, "variant": "g0_v0", "status": "ok", "input_sets": [
            {"name": "random", "kind": "mismatch", "ok": False, "max_abs_err": 1.0, "max_rel_err": 0.5,
             "detail": "off", "leaf": 0}]},
        {**base, "variant": "g0_v1", "status": "compile-crash", "error": err},
        {**base, "variant": "g0_v2", "status": "process-crash", "error": err},
        {**base, "variant": "g0_v3", "status": "eager-error", "error": err},
        {**base, "variant": "g0_v4", "status": "internal-error", "error": err},
        {**base, "variant": "g0_v5", "status": "ok", "input_sets": [
            {"name": "random", "kind": "nondeterministic", "ok": True, "detail": "two eager runs differ"}]},
    ]
    findings, notes = judge_results(manifest, [Result.from_dict(r) for r in results], tmp_path, "inductor")
    assert [f.kind for f in findings] == ["seed-miscompile", "compile-crash", "run-crash"]
    assert [n.kind for n in notes] == ["unsound-rewrite", "internal-error", "nondeterministic"]
    for d in findings + notes:
        _round_trips(json.loads(json.dumps(d.to_dict())))


# The findings of a real run (the command line, Inductor's injected relu bug) round-trip the same way:
# checked on the results.json of tests/e2e/test_e2e.py::test_injected_miscompile_is_found_minimized_...
# (a second run of the same model and bug here cost half a minute of CPU).


# ----------------------------------------------------------------------------------------------
# worker results


def _result_round_trips(d: dict) -> None:
    """What the wire and results.json carry reads back as a Result and gives the same dict, keys in order."""
    d = json.loads(json.dumps(d))
    rec = Result.from_dict(d)
    assert rec.to_dict() == d and list(rec.to_dict()) == list(d)
    assert isinstance(rec.status, ResultStatus) and rec.status == d["status"]
    assert json.loads(json.dumps(rec.to_dict())) == d


def test_result_record_has_the_dict_literal_shape():
    """Built directly: the fields in order, error, input_set and every later field only once set."""
    r = Result(task="t", variant="v", backend="inductor", device="cpu", status=ResultStatus.OK, kernel_files=[])
    assert list(r.to_dict()) == ["task", "variant", "backend", "device", "status", "input_sets", "timings",
                                 "kernel_files"]
    assert type(r.to_dict()["status"]) is str and r.to_dict()["status"] == "ok"
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.status = ResultStatus.RUN_CRASH  # type: ignore[misc]
    draft = ResultDraft(task="t", variant="v", backend="inductor", device="cpu", status=ResultStatus.OK,
                        kernel_files=[])
    draft.status, draft.error, draft.input_set = ResultStatus.RUN_CRASH, {"type": "E", "message": "m"}, "random-0"
    d = draft.freeze().to_dict()
    assert list(d)[7:] == ["error", "input_set", "kernel_files"] and d["status"] == "run-crash"
    _result_round_trips(d)
    assert str(ResultStatus.EAGER_ERROR) == f"{ResultStatus.EAGER_ERROR}" == "eager-error"
    assert ResultStatus.parse("timeout") is ResultStatus.TIMEOUT
    with pytest.raises(ValueError, match=r"unknown result status 'crashed'.*known statuses:.*process-crash"):
        Result.from_dict({**d, "status": "crashed"})


PROGRAM = """import torch
DEVICE = torch.device("cpu")
def forward(x):
    {body}
def index_sources(x):
    return {{}}
def get_inputs(device=None):
    return [torch.linspace(-2, 2, 32).reshape(4, 8)]
"""
BACKENDS = """
def boom(gm, example_inputs):
    raise RuntimeError("boom at compile")
def second_call_fails(gm, example_inputs):
    calls = [0]
    def run(*args):
        calls[0] += 1
        if calls[0] > 1:
            raise RuntimeError("boom at run")
        return gm(*args)
    return run
"""


def _fake_worker(monkeypatch, script: str) -> None:
    """Workers of runners/exec/pool.py run `script` instead of runners.worker."""
    import eqsat_test.runners.exec.pool as pool
    real = pool.subprocess.Popen
    monkeypatch.setattr(pool.subprocess, "Popen", lambda args, **kw: real([sys.executable, "-c", script], **kw))


FAKE_WORKER = """import json, os, sys, time
TAG = "@@EQSAT-RESULT@@ "
print(TAG + json.dumps({"ready": True}), flush=True)
phase, then = json.loads(sys.stdin.readline())["id"].split("/")
print(TAG + json.dumps({"phase": phase}), flush=True)
if then == "die":
    os._exit(3)
time.sleep(60)
"""


def test_every_status_the_code_produces_parses(tmp_path, monkeypatch):
    """The producers of results, in process (runners/worker.py's run_task, batch.py, sweep_run.py)
    and through runners/exec/pool.py's real timeout and crash paths (with a stand-in worker script)
    and minimize.py's CheckPool: every status they make is a ResultStatus, and every result round-trips."""
    from eqsat_test.runners.exec import pool as P
    from eqsat_test.runners.findings.minimize import CheckPool
    from eqsat_test.runners.worker import run_task
    (tmp_path / "backends.py").write_text(BACKENDS)
    files = {}
    for name, body in (("fine", "return (torch.relu(x) * 2.0,)"), ("bad", "raise ValueError('no')")):
        files[name] = tmp_path / f"{name}.py"
        files[name].write_text(PROGRAM.format(body=body))
    task = Task(id="t", variant="v", file=str(files["fine"]), backend="aot_eager", device="cpu", is_param=[False])
    made: dict[str, Result] = {}
    for want, t in (("ok", task), ("eager-error", task.with_(file=str(files["bad"]))),
                    ("compile-crash", task.with_(backend=f"{tmp_path / 'backends.py'}:boom")),
                    ("run-crash", task.with_(backend=f"{tmp_path / 'backends.py'}:second_call_fails"))):
        made[want] = run_task(t)
        assert made[want].status == want, made[want]
    assert made["run-crash"].input_set == "random-0" and made["compile-crash"].error_message
    batch = run_task(Task(id="b", kind=TaskKind.BATCH, backend="aot_eager", device="cpu",
                          batch=(task.with_(id="t1"), task.with_(id="t2", variant="v2"))))
    assert batch.batch_results is not None and [r and r.status for r in batch.batch_results] == ["ok", "ok"]
    made.update({f"batch {i}": r for i, r in enumerate(batch.batch_results) if r is not None})
    made["batch"] = batch
    made["sweep"] = run_task(task.with_(kind=TaskKind.SWEEP, sweep={
        "full": False, "points": 1, "dynamic": "none", "dtypes": ["float64"], "seconds": 30}))
    assert made["sweep"].status == "ok" and made["sweep"].sweep_task and made["sweep"].input_sets

    _fake_worker(monkeypatch, FAKE_WORKER)
    w = P.Worker(0, P.PoolOptions(timeout=1.0), lambda s: None)
    try:
        for want, phase, then in (("timeout", "compile", "hang"), ("eager-error", "eager", "hang"),
                                  ("process-crash", "compile", "die"), ("eager-error", "eager", "die")):
            r = w.run(task.with_(id=f"{phase}/{then}"))
            assert r.status == want and r.phase == phase and r.error_message and r.elapsed is not None, r
            made[f"pool {then} in {phase}"] = r
    finally:
        w.kill()

    def cannot_start(self, t):
        raise RuntimeError("worker 0 failed to start")
    monkeypatch.setattr(P.Worker, "run", cannot_start)
    cp = CheckPool(P.PoolOptions(jobs=1))
    made["check pool"] = cp.run([task])[0]
    assert made["check pool"].status == "internal-error" and made["check pool"].variant == "v"
    assert {r.status for r in made.values()} == set(ResultStatus)  # every one is made
    for r in made.values():
        assert isinstance(r.status, ResultStatus)
        _result_round_trips(r.to_dict())


RESULT_MODULES = ("eqsat_test/runners/worker.py", "eqsat_test/runners/exec/pool.py", "eqsat_test/runners/exec/batch.py",
                  "eqsat_test/runners/checks/sweep_run.py", "eqsat_test/runners/findings/minimize.py", "eqsat_test/runners/pipeline.py",
                  "eqsat_test/runners/checks/sweeps.py", "eqsat_test/runners/checks/configs.py", "eqsat_test/runners/checks/devices.py",
                  "eqsat_test/runners/checks/perf.py")


def test_no_status_is_a_bare_string_in_the_code():
    """Where results are made and judged, statuses are ResultStatus members, never string literals:
    a "status" key, `status=` or a comparison with something named status."""
    bare = []
    for rel in RESULT_MODULES:
        for node in ast.walk(ast.parse((REPO / rel).read_text())):
            consts = []
            if isinstance(node, ast.Dict):
                consts = [v for k, v in zip(node.keys, node.values)
                          if isinstance(k, ast.Constant) and k.value == "status"]
            elif isinstance(node, ast.keyword) and node.arg == "status":
                consts = [node.value]
            elif isinstance(node, ast.Compare) and ("status" in ast.unparse(node.left)
                                                    or ast.unparse(node.left) == "st"):
                consts = [c for x in node.comparators for c in (x.elts if isinstance(x, ast.Tuple) else [x])]
            bare += [f"{rel}:{c.lineno}: {c.value!r}" for c in consts
                     if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    assert not bare, bare


def _seed_module(tmp_path: Path) -> tuple[Path, list[bool]]:
    """relu_mlp.py's seed program as generation writes it (rewrite/generate.py): module and inputs file."""
    import torch

    from eqsat_test.lowering.bundle import StoredProgram
    from eqsat_test.lowering.capture import capture
    from eqsat_test.lowering.lift import lift_fx
    from eqsat_test.lowering.load import load_model
    lm = load_model(TEST_MODELS / "relu_mlp.py")
    g = capture(lm.module, tuple(lm.inputs))[0]
    lifted = lift_fx(g.gm)
    torch.save([x.detach().cpu() for x in list(g.inputs) + list(lifted.constants.values())],
               tmp_path / "g0.inputs.pt")
    sp = StoredProgram(lifted.program, tuple(lifted.input_names), "g0.inputs.pt", "seed program: relu_mlp.py")
    (tmp_path / "g0_seed.py").write_text(sp.render())
    return tmp_path / "g0_seed.py", list(g.is_param) + [True] * len(lifted.constants)


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_real_worker_results_round_trip(tmp_path):
    """relu_mlp.py's seed program run by a real worker subprocess (Inductor on the CPU), as `eqsat-test`
    runs it, and a task the worker fails on itself: the results read back as Results, unchanged."""
    from eqsat_test.runners.exec.pool import PoolOptions, Worker
    f, is_param = _seed_module(tmp_path)
    w = Worker(0, PoolOptions(timeout=300), lambda s: None)
    try:
        task = Task(id="g0_seed@inductor@cpu", variant="g0_seed", file=str(f), backend="inductor", device="cpu",
                    is_param=is_param, save_eager=str(tmp_path / "eager"), save_compiled=str(tmp_path / "compiled"))
        r = w.run(task)
        broken = w.run(Task(id="broken", backend="inductor"))  # no program: the worker's own ImportError
    finally:
        w.kill()
    assert r.status == "ok" and [s.name for s in r.input_sets] == ["given", "random-0", "special-0"]
    assert list(r.to_dict()) == ["task", "variant", "backend", "device", "status", "input_sets", "timings",
                                 "compute_dtype", "kernel_files", "dynamo", "elapsed"]
    assert broken.status == "internal-error" and (broken.error or {})["type"] == "ImportError"
    assert list(broken.to_dict()) == ["task", "variant", "backend", "device", "status", "input_sets", "timings",
                                      "error", "elapsed"]
    for d in (r, broken):
        _result_round_trips(d.to_dict())


# ----------------------------------------------------------------------------------------------
# results.json


def _results_round_trip(data: dict) -> RunResults:
    rec = RunResults.from_dict(data)
    back = rec.to_dict()
    assert back == data and list(back) == list(data) and list(back["report"]) == list(data["report"])
    assert all(list(a) == list(b) for a, b in zip(back["report"]["findings"], data["report"]["findings"]))
    assert all(list(a) == list(b) for a, b in zip(back["raw"], data["raw"]))
    return rec


@pytest.mark.slow  # a real run of the command line, about a minute on two shared cores
def test_a_real_runs_results_json_reads_into_records_and_writes_back_equal(eqsat, tmp_path):
    """relu_mlp.py with Inductor's injected relu bug, on CPU: results.json (version 1) reads into RunResults,
    its findings as Finding and its worker results as Result records, and writes back the same JSON, keys in
    order; the same file without `schema_version` (as written before versions) reads and writes back too."""
    out = tmp_path / "out"
    res = eqsat(TEST_MODELS / "relu_mlp.py", "-n", "2", "--no-sweep", "--jobs", "1", "--timeout", "240",
                "-r", str(TEST_MODELS / "e2e_rules"), "--no-artifacts", "--json", "-b",
                'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"', "--out", out)
    assert res.rc == 1, res.stderr[-3000:]
    data = json.loads((out / "results.json").read_text())
    assert list(data) == ["schema_version", "report", "raw"] and data["schema_version"] == RESULTS_SCHEMA_VERSION
    rec = _results_round_trip(data)
    assert rec.findings and all(isinstance(f, Finding) for f in rec.findings)
    assert any(f.bug for f in rec.findings) and all(isinstance(r, Result) for r in rec.raw) and rec.raw
    assert {r.status for r in rec.raw} <= set(ResultStatus)
    old = {k: v for k, v in data.items() if k != "schema_version"}
    assert _results_round_trip(old).schema_version is None


def test_results_json_round_trips_through_run_results(tmp_path):
    """RunResults writes results.json (to_json) and reads it back (from_json) equal, findings in the report's
    "findings" key; a file written before versions (no schema_version) reads too."""
    f = new_finding(FindingKind.MISCOMPILE, {"variant": "g0_v001", "graph": "g0"}, detail="1 differ",
                    failing_inputs="/scratch/x.pt")
    r = Result(task="t1", variant="g0_v001", backend="inductor", device="cpu", status=ResultStatus.OK,
               input_sets=[InputSetVerdict(name="given", rules=[])], elapsed=0.5)
    rec = RunResults(report={"model": "m.py", "findings": [], "stats": {"notes": 0}}, findings=(f.public(),), raw=(r,))
    rec.write(tmp_path)
    back = RunResults.read(tmp_path)
    assert back.to_dict() == rec.to_dict() and list(back.report) == ["model", "findings", "stats"]
    assert back.findings[0].to_dict() == f.without("failing_inputs").to_dict() and back.raw[0].elapsed == 0.5
    assert back.report_dict()["findings"] == [f.public().to_dict()]
    old = {k: v for k, v in json.loads((tmp_path / "results.json").read_text()).items() if k != "schema_version"}
    assert RunResults.from_json(json.dumps(old)).schema_version is None


def test_input_set_verdicts_are_records_with_the_producers_json():
    """A worker's entry (a verdict's dict with the worker's keys) reads into an InputSetVerdict and writes back the
    same dict; a key no field holds is refused by name, so a producer's new key gets a field."""
    entry = {"name": "random-0", "ok": False, "kind": "mismatch", "max_abs_err": 1.0, "max_rel_err": 0.5,
             "leaf": "[0]", "detail": "1 differ", "rules": [], "failing": [3], "part": "gradient",
             "grad_input": "x", "inputs_file": "/s/random-0.inputs.pt"}
    r = Result.from_dict({"status": "ok", "input_sets": [entry]})
    (s,) = r.input_sets
    assert isinstance(s, InputSetVerdict) and not s.ok and s.part == "gradient" and s.failing == [3]
    assert r.to_dict()["input_sets"] == [entry] and list(r.to_dict()["input_sets"][0]) == list(entry)
    with pytest.raises(TypeError, match="unknown key.*surprise"):
        Result.from_dict({"status": "ok", "input_sets": [{**entry, "surprise": 1}]})


def test_results_json_of_an_unknown_version_is_refused():
    data = {"schema_version": RESULTS_SCHEMA_VERSION + 1, "report": {"findings": []}, "raw": []}
    with pytest.raises(ValueError, match="schema version"):
        RunResults.from_dict(data)


def test_findings_are_frozen_and_later_stages_make_new_ones():
    """A stage sets keys with `with_`: a new record, the old one unchanged; a new key comes last, as in a dict."""
    f = new_finding(FindingKind.MISCOMPILE, BASE, input_set="random", detail="x")
    g = f.with_(detail="y", cluster="c1")
    assert f.detail == "x" and "cluster" not in f.to_dict() and f.cluster is None
    assert g.detail == "y" and g.cluster == "c1" and g.to_dict()["cluster"] == "c1"
    with pytest.raises(TypeError, match="no field triage_note"):  # a key a stage sets gets a field first
        f.with_(triage_note="t")
    old = Finding.from_dict({**f.to_dict(), "from_an_older_version": 1})  # a key no field names: kept as read
    assert old.more == {"from_an_older_version": 1} and old.to_dict()["from_an_older_version"] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.detail = "z"  # type: ignore[misc]
    assert list(g.without("cluster", "input_set").to_dict()) == [k for k in g.to_dict() if k not in ("cluster", "input_set")]
    _round_trips(g.to_dict())


def test_task_is_frozen_and_its_wire_dict_round_trips():
    """A task is a frozen record, no mapping; the worker protocol carries its dict (protocol.task_line), read back
    once by the worker (protocol.read_task) as the same task, of every kind; a key no field holds is refused."""
    from eqsat_test.runners.protocol import read_task, task_line
    t = Task(id="g0_v1@inductor@cpu#sweep", variant="g0_v1", file="v.py", backend="inductor", kind=TaskKind.SWEEP,
             sweep={"points": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.device = "cuda"  # type: ignore[misc]
    assert not hasattr(t, "get") and not hasattr(t, "keys")
    with pytest.raises(TypeError):
        t["sweep"]  # type: ignore[index]
    d = json.loads(json.dumps(t.to_dict()))
    assert d["kind"] == "sweep" and d["sweep"] == {"points": 1} and "batch" not in d and "timeout_s" not in d
    assert Task.from_dict(d) == t and Task.from_dict(d).to_dict() == d and read_task(task_line(t)) == t
    assert isinstance(Task.from_dict(d).kind, TaskKind)
    u = t.with_(coverage="c.json", timeout_s=5.0)
    assert u.coverage == "c.json" and u.timeout_s == 5.0 and t.coverage is None and t.timeout_s is None
    assert list(u.to_dict())[-1] == "timeout_s" and read_task(task_line(u)) == u
    run = Task(id="g0_v2@inductor@cpu", variant="g0_v2", file="w.py", backend="inductor", is_param=[True, False],
               perf={"budget": 0.15}, save_eager="/s/e", save_compiled="/s/c", grad=True)
    batch = Task(id="batch0:g0_v1+1", variant="batch of 2", backend="inductor", kind=TaskKind.BATCH,
                 batch=(run, run.with_(id="g0_v3@inductor@cpu", variant="g0_v3")), group="('g0', 'inductor', 'cpu')",
                 timeout_s=1200.0)
    repro = Task(id="confirm:f1", variant="f1", kind=TaskKind.REPRO, folder="/out/findings/001", timeout_s=60.0)
    warmup = Task(id="warmup", kind=TaskKind.WARMUP, device="cuda", backend="eager")
    for task in (run, batch, repro, warmup):
        back = read_task(task_line(task))
        assert back == task and back.to_dict() == task.to_dict() and type(back.batch) is tuple
    assert [s.variant for s in read_task(task_line(batch)).batch] == ["g0_v2", "g0_v3"]
    with pytest.raises(TypeError, match="unknown key.*then"):
        Task.from_dict({**run.to_dict(), "then": "die"})


def test_result_round_trips_and_reads_an_old_raw_result():
    """A Result is a frozen record, no mapping: every field the worker and the pool set round-trips through its
    dict; an old raw result (results.json written when a result was a mapping of open keys) reads into the typed
    fields, and a key no field holds goes to `more`, written back as it was."""
    r = Result(task="g0_v1@inductor@cpu", variant="g0_v1", backend="inductor", device="cpu",
               status=ResultStatus.RUN_CRASH, input_sets=[InputSetVerdict(name="given")],
               timings={"load": 0.1, "compile": 1.5}, error={"type": "RuntimeError", "message": "boom"},
               input_set="random-0", file="/b/g0_v1.py", seed=3, save_compiled="/s/c", compute_dtype="float32",
               referee={"line": "compiled is wrong"}, kernel_files=["/tmp/k.py"], dynamo={"graph_breaks": 0},
               compiler_lines={"file": "/o/l.json", "lines": 10, "backend": "sys.monitoring"}, elapsed=2.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.elapsed = 1.0  # type: ignore[misc]
    assert not hasattr(r, "get") and not hasattr(r, "keys")
    with pytest.raises(TypeError):
        r["status"]  # type: ignore[index]
    _result_round_trips(r.to_dict())
    assert Result.from_dict(r.to_dict()) == r
    batch = Result(task="b", variant="batch of 2", status=ResultStatus.OK, batch={"size": 2},
                   batch_results=(None, r.with_(batch={"id": "b", "size": 2}, elapsed=None)))
    _result_round_trips(batch.to_dict())
    assert Result.from_dict(json.loads(json.dumps(batch.to_dict()))) == batch
    # an old raw result: open keys beside the fixed ones, as the mapping wrote them (null values too)
    old = {"task": "g0_seed@inductor@cpu#sweep", "variant": "g0_seed", "backend": "inductor", "device": "cpu",
           "status": "timeout", "input_sets": [], "timings": {}, "error": {"type": "Timeout", "message": "no result"},
           "sweep_task": True, "sweep": {"judged": 3}, "perf": {"seconds": 0.2}, "training": {"random": False},
           "phase": None, "elapsed": 300.1, "made_by_an_older_version": {"x": 1}}
    rec = Result.from_dict(old)
    assert rec.status == ResultStatus.TIMEOUT and rec.sweep_task and rec.sweep == {"judged": 3} and rec.is_sweep
    assert rec.perf == {"seconds": 0.2} and rec.training == {"random": False} and rec.elapsed == 300.1
    assert rec.phase is None and rec.more == {"made_by_an_older_version": {"x": 1}}
    assert rec.to_dict() == {k: v for k, v in old.items() if v is not None}
    assert list(rec.to_dict())[-1] == "made_by_an_older_version"
    raw = RunResults.from_dict({"report": {"findings": []}, "raw": [old]}).raw
    assert raw == (rec,) and raw[0].error_message == "no result"


def test_meta_json_is_written_and_updated_by_one_writer_and_reads_back(tmp_path):
    from eqsat_test.runners.findings.meta import MetaContext, read_meta, write_meta
    f = new_finding(FindingKind.MISCOMPILE, {"variant": "g0_v001", "graph": "g0", "backend": "inductor"},
                    detail="1 differ", failing_inputs="/scratch/x.pt", min_detail="[0] 1 differ")
    ctx = MetaContext(versions={"torch": "2.x"}, model="m.py", collect_env="env")
    assert not write_meta(tmp_path, f, update=True) and not (tmp_path / "meta.json").exists()  # no folder's meta yet
    assert write_meta(tmp_path, f, ctx)
    on_disk = json.loads((tmp_path / "meta.json").read_text())
    assert "failing_inputs" not in on_disk and on_disk["model"] == "m.py" and on_disk["min_detail"] == "[0] 1 differ"
    back = read_meta(tmp_path)
    assert back.context == ctx and back.finding.to_dict() == f.without("failing_inputs").to_dict()
    g = f.with_(confirmed=True, kind=FindingKind.FLAKY.value)
    write_meta(tmp_path, g, update=True)  # an update keeps the context the file has
    back = read_meta(tmp_path)
    assert back.context == ctx and back.finding.confirmed is True and back.finding.kind == "flaky"

"""Tests of hunt mode's campaign glue (runners/campaign/hunt*.py) that run no compile: the programs table and resume,
the generator child (a hang costs one seed), each program's jobs, the progress and summary figures, and the draft
upstream report of a new root cause."""
from __future__ import annotations

import json
from pathlib import Path

import torch

from eqsat_test.hunt.program import draw_program
from eqsat_test.runners.campaign.hunt import Feeder, HuntOptions, HuntState, internal_error_line, program_jobs
from eqsat_test.runners.campaign.hunt_issues import (
    draft_issues,
    issue_text,
    ledger_ids_now,
    pasteable_repro,
    write_issue,
)
from eqsat_test.runners.campaign.hunt_programs import SEED_STRIDE, Generator, Made, ProgramTable
from eqsat_test.runners.campaign.store import Store
from eqsat_test.runners.findings.clusters import Cluster
from eqsat_test.runners.findings.meta import FindingMeta, MetaContext
from eqsat_test.runners.records import FindingKind, new_finding


def _store(tmp_path: Path) -> Store:
    return Store(tmp_path / "campaign.sqlite")


def test_the_generator_child_writes_the_seeds_program_and_survives_a_hang(tmp_path):
    gen = Generator(tmp_path / "programs")
    try:
        made = gen.make(11)
        assert made.ok and made.stage == "ok" and made.record["seed"] == 11
        assert Path(made.path).read_text() == draw_program(11).source()
        gen.timeout = 0.001  # no program comes that fast: the seed is discarded, the child started again
        slow = gen.make(12)
        assert not slow.ok and slow.stage == "generate"
        gen.timeout = 120
        assert gen.make(13).ok
    finally:
        gen.close()


def test_the_programs_table_counts_and_resumes(tmp_path):
    with _store(tmp_path) as store:
        table = ProgramTable(store)
        assert table.next_index(3) == 0
        p = tmp_path / "p3000000.py"
        p.write_text(draw_program(3 * SEED_STRIDE).source())
        table.add(3, 0, Made(3 * SEED_STRIDE, True, "ok", path=str(p), record={"seed": 3 * SEED_STRIDE}), "1")
        table.add(3, 1, Made(3 * SEED_STRIDE + 1, False, "eager", "RuntimeError: boom"), "1")
        assert table.next_index(3) == 2 and table.next_index(0) == 0
        c = table.counts()
        assert (c["ok"], c["discarded"], c["by_stage"]) == (1, 1, {"eager": 1})
        p.unlink()  # a cleaned folder: the store has the source
        row = table.ok_programs()[0]
        assert table.restore_file(row).read_text() == draw_program(3 * SEED_STRIDE).source()


def test_a_programs_jobs(tmp_path):
    opts = HuntOptions(minutes=1, devices=("cpu",), variants=4, sweep_every=8)
    p = tmp_path / "p8.py"
    p.write_text("x = 1\n")
    swept = program_jobs(opts, tmp_path, p, {"seed": 8, "dynamic": True})
    plain = program_jobs(opts, tmp_path, p, {"seed": 9, "dynamic": False})
    assert swept[0]["backend"] == "inductor-dynamic" and plain[0]["backend"] == "inductor"
    assert "--no-sweep" not in swept[0]["run_args"] and "--no-sweep" in plain[0]["run_args"]
    assert swept[0]["variants"] == 4 and swept[0]["model_rel"] == "p8.py"
    both = program_jobs(HuntOptions(minutes=1, devices=("cpu", "cuda")), tmp_path, p, {"seed": 9})
    assert [j["device"] for j in both] == ["cpu", "cuda"]
    assert program_jobs(opts, tmp_path, p, {"seed": 9})[0]["key"] == plain[0]["key"]  # stable: resume finds it


def test_a_resumed_hunt_runs_the_unjudged_programs_first_then_new_seeds(tmp_path):
    opts = HuntOptions(minutes=1, seed=2, programs_per_job=1)
    with _store(tmp_path) as store:
        table = ProgramTable(store)
        f1 = Feeder(opts, tmp_path, table, store, HuntState())
        try:
            first = [j for b in f1(2) for j in b]
        finally:
            f1.close()
        assert len(first) >= 2 and table.next_index(2) >= 2
        store.record_job(first[0], {"status": "done", "exit_code": 0, "started": 0.0, "finished": 1.0,
                                    "report": {"findings": []}})
        f2 = Feeder(opts, tmp_path, table, store, HuntState())
        try:
            assert [j["key"] for j in f2.backlog] == [j["key"] for j in first[1:]]
            made_before = table.next_index(2)
            again = f2(len(first))
            assert again[0][0]["key"] == first[1]["key"] and table.next_index(2) > made_before
        finally:
            f2.close()


def test_internal_error_lines():
    tail = "eqsat-test: graph g0: 8 ops\neqsat-test: internal error: KeyError: [v3, l_x0_] (traceback: /tmp/x.txt)\n"
    assert internal_error_line(tail, "done") == "KeyError: [v3, l_x0_]"
    assert internal_error_line("killed by signal 9\nmore", "crash") == "crash: killed by signal 9"


def _finding(tmp_path: Path) -> Path:
    """A finding folder as a run writes one, of a program whose compiled output would be wrong."""
    d = tmp_path / "runs" / "p1-abc" / "findings" / "001-miscompile-g0_v001"
    d.mkdir(parents=True)
    (d / "minimized.py").write_text(
        '# minimized by eqsat-test\nimport torch\nfrom pathlib import Path\n\nDEVICE = torch.device("cpu")\n'
        'INPUTS_FILE = Path(__file__).with_name("g0.inputs.pt")\n\n\ndef forward(l_x_):\n    return (l_x_.cumsum(0),)\n'
        '\n\ndef index_sources(l_x_):\n    return {}\n\n\ndef get_inputs(device=None):\n    return []\n')
    torch.save([torch.tensor([1.0, float("nan"), 3.0])], d / "inputs.pt")
    (d / "repro.py").write_text("raise SystemExit(1)\n")
    (d / "bisect.txt").write_text("Compiler bisector: first bad backend inductor, subsystem lowerings\n")
    (d / "meta.json").write_text(json.dumps({"kind": "miscompile", "device": "cpu", "backend": "inductor-dynamic", "collect_env": "PyTorch "
                                             "version: 2.x", "min_detail": "[0] float32[3]: 1 differ",
                                             "triage_info": {"labels": ["oncall: pt2"], "component": "inductor"}}))
    return d


def _cluster(repro: Path, ledger=()) -> Cluster:
    return Cluster(key="k1", kind="miscompile", backend="inductor-dynamic", device="cpu", symptom="wrong values",
                   input_class="ordinary values", pattern=("cumsum",), minimized=True, scope="", count=2,
                   variants=("g0_v001",), repro=str(repro), ledger=tuple(ledger))


def test_the_pasteable_repro_runs_alone_with_its_inputs_inline(tmp_path):
    d = _finding(tmp_path)
    script, inline = pasteable_repro(d / "minimized.py", d / "inputs.pt", FindingMeta(
        new_finding(FindingKind.MISCOMPILE, device="cpu", backend="inductor"), MetaContext()))
    assert inline and "float('nan')" in script and "INPUTS_FILE" not in script and "index_sources" not in script
    assert "torch.compile(forward, backend='inductor')" in script
    compile(script, "repro.py", "exec")


def test_a_new_root_cause_gets_a_draft_report(tmp_path):
    d = _finding(tmp_path)
    issue = write_issue(_cluster(d / "repro.py"), d, tmp_path / "issues" / "01-cumsum",
                        [{"seed": 1, "record": {"version": "1"}}], run=False)
    text = issue.read_text()
    for part in ("# [inductor-dynamic on cpu] wrong values: cumsum", "### 🐛 Describe the bug", "```python",
                 "dynamic=True", "**Expected**", "**Actual**: [0] float32[3]: 1 differ", "first bad backend inductor",
                 "### Versions", "PyTorch version: 2.x", "seed 1 (generator 1)"):
        assert part in text, part
    assert (issue.parent / "repro.py").is_file() and (issue.parent / "eqsat_repro.py").is_file()
    assert issue_text(_cluster(d / "repro.py"), None, "pass", "", "", [], inline=False).count("attach `inputs.pt`") == 1
    window = {"seed": 3, "record": {"kind": "window", "source": "benchmarks/corpus/act_gelu.py", "graph": 0,
                                    "version": "windows-1"}}
    text = issue_text(_cluster(d / "repro.py"), None, "pass", "", "", [window], inline=True)
    assert "a window of benchmarks/corpus/act_gelu.py (graph 0, seed 3, windows-1)" in text  # its model, not a seed alone


def test_drafts_only_for_root_causes_the_ledger_does_not_hold_now(tmp_path):
    """A cluster whose representative matches an entry gets no draft; one recorded as matching an entry that the
    ledger, as it is now, does not give it (a compiled index_add wrongly taken for eager's #16) gets one."""
    with _store(tmp_path) as store:
        for key, kind, ops, recorded in (("known", "miscompile", ["torch.remainder"], (8,)),
                                         ("new", "miscompile", ["torch.cumsum"], ()),
                                         ("stale", "seed-miscompile", ["Tensor.index_add", "torch.arange"], (16,))):
            d = _finding(tmp_path / key)
            meta = json.loads((d / "meta.json").read_text())
            (d / "meta.json").write_text(json.dumps({**meta, "kind": kind, "min_ops": ops, "backend": "inductor"}))
            c = Cluster.from_dict({**_cluster(d / "repro.py", ledger=recorded).to_dict(), "key": key,
                                   "pattern": [o.rsplit(".", 1)[-1] for o in ops]})
            store.db.execute("INSERT INTO clusters VALUES (?,?,?,?,?,?,?,?,?,?,1,?,?,?)",
                             (c.key, c.kind, c.backend, c.device, c.symptom, c.input_class, json.dumps(list(c.pattern)),
                              json.dumps(list(c.ledger)), 0, c.count, 0.0, 0.0, json.dumps(c.to_dict())))
        paths = draft_issues(store, tmp_path, run=False)
    assert sorted(p.parent.name.split("-", 1)[1] for p in paths) == ["cumsum-cpu", "index_add-arange-cpu"]


def test_an_unminimized_finding_matches_the_ledger_by_its_clusters_pattern(tmp_path):
    """A finding not minimized holds every op of its program (an `amin` of a bool mask beside the softmax that
    failed, in an int8 dtype sweep): matched by those it would take ledger #5 (int8 amin); by its cluster's
    pattern, `mul` and `softmax`, it is #21 alone, as clustering recorded."""
    from eqsat_test.runners.findings.ledger import load_ledger
    d = _finding(tmp_path)
    meta = json.loads((d / "meta.json").read_text())
    (d / "meta.json").write_text(json.dumps({
        **meta, "kind": "seed-miscompile", "backend": "inductor", "input_set": "sweep-dtype=int8-1-random", "sweep": "dtype=int8",
        "ops": ["Tensor.amin", "operator.le", "operator.mul", "torch.nn.functional.softmax"],
        "input_dtypes": ["float32"]}))
    c = Cluster.from_dict({**_cluster(d / "repro.py", ledger=(21,)).to_dict(), "pattern": ["mul", "softmax"],
                           "raw_ops": ["mul", "softmax"], "minimized": False})
    ledger = load_ledger()
    assert ledger_ids_now(c, ledger) == (21,)
    assert 5 in ledger_ids_now(Cluster.from_dict({**c.to_dict(), "raw_ops": []}), ledger)  # every op: #5 too

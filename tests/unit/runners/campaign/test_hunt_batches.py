"""Batches of programs in one process (runners/campaign/batch.py) on the local pool: grouping, each program recorded as
its own job as it ends, a crash or a hang costing only its own program, a deadline stopping a batch between programs,
and a resumed hunt taking a half-finished batch's programs first. The pool runs real supervised subprocesses; all but
the last test run a stand-in for `eqsat-test run` that speaks its per-model lines (runners/protocol.py) and writes
each model's report.json, so that they need no compile."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from eqsat_test.runners.campaign import jobs as jobsmod
from eqsat_test.runners.campaign.batch import Batcher, group_jobs
from eqsat_test.runners.campaign.jobs import make_jobs
from eqsat_test.runners.campaign.run import SlotPlan, run_local
from eqsat_test.runners.campaign.spec import Spec
from eqsat_test.runners.campaign.store import Store

# A stand-in for `eqsat-test run M... --out OUT`: a model named crash* dies by SIGKILL, hang* sleeps, slow* takes a
# second; the others write a report. With several models, each says its start and end as many.py does.
FAKE_RUN = r'''
import json, os, signal, sys, time
from pathlib import Path
from eqsat_test.runners.protocol import model_end_line, model_start_line
args = sys.argv[1:]
out = Path(args[args.index("--out") + 1])
models = [a for a in args if a.endswith(".py")]
for k, m in enumerate(models, 1):
    d = out / Path(m).stem if len(models) > 1 else out
    if len(models) > 1:
        print("eqsat-test: " + model_start_line(k, len(models), m, d), file=sys.stderr, flush=True)
    name = Path(m).stem
    print(f"eqsat-test: judging {name}", file=sys.stderr, flush=True)
    if name.startswith("crash"):
        os.kill(os.getpid(), signal.SIGKILL)
    if name.startswith("hang"):
        time.sleep(600)
    if name.startswith("slow"):
        time.sleep(1.5)
    d.mkdir(parents=True, exist_ok=True)
    (d / "report.json").write_text(json.dumps({"findings": [], "variants": 2, "executed": 3, "stats": {},
                                               "where": str(d)}))
    if len(models) > 1:
        print("eqsat-test: " + model_end_line(k, len(models), 0), file=sys.stderr, flush=True)
'''


class _Quiet:
    def __init__(self) -> None:
        self.updates: list[str] = []

    def update(self, job, outcome, counts) -> None:
        self.updates.append(Path(job["model"]).stem)

    def heartbeat(self, running) -> None:
        pass


def _jobs(tmp_path: Path, names: list[str], timeout: float = 120.0) -> list[dict]:
    models = []
    for n in names:
        p = tmp_path / "programs" / f"{n}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# {n}\n")
        models.append(p)
    s = Spec(path=tmp_path / "hunt.json", name="t", models=models, rule_sets=[[]], backends=["inductor"],
             devices=["cpu"], variants=2, seeds=[0], inputs="given", run_args=["--no-sweep"], job_timeout=timeout,
             variant_timeout=1.0)
    return make_jobs(s)


@pytest.fixture
def fake_run(tmp_path, monkeypatch):
    script = tmp_path / "fake_run.py"
    script.write_text(FAKE_RUN)
    monkeypatch.setattr(jobsmod, "job_command", lambda job, run_dir, model=None, rule_args=None, jobs=1, models=None:
                        [sys.executable, str(script), *(models or [model or job["model"]]), "--out", str(run_dir)])


def _pool(tmp_path: Path, items: list, deadline: float | None = None):
    out = tmp_path / "hunt"
    out.mkdir(exist_ok=True)
    store = Store(out / "campaign.sqlite")
    progress = _Quiet()
    stats = run_local(items, store, out, SlotPlan(at_once=1, per_job=1, threads=1), "cid", progress, deadline)
    rows = {Path(j["model"]).stem: j for j in store.jobs()}
    store.close()
    return stats, rows, progress


def test_jobs_are_grouped_by_command_up_to_k_and_never_two_of_one_name(tmp_path):
    plain = _jobs(tmp_path / "a", ["p1", "p2", "p3", "p4", "p5"])
    swept = _jobs(tmp_path / "b", ["s1"])
    swept[0]["run_args"] = ["--sweep-points", "1"]
    twin = _jobs(tmp_path / "c", ["p2"])  # another folder's program of the same name
    groups = group_jobs(plain[:3] + swept + plain[3:] + twin, 2)
    assert [[Path(j["model"]).stem for j in g] for g in groups] == [["p1", "p2"], ["p3", "p4"], ["p5", "p2"], ["s1"]]
    assert groups[2][1]["model"] != groups[0][1]["model"]
    b = Batcher(3, patience=2)  # a lone signature goes out, not full, once two more jobs came after it
    assert b.add(swept[0]) == [] and b.add(plain[0]) == [] and b.add(plain[1]) == [swept]
    assert b.add(plain[2]) == [plain[:3]]
    assert b.add(plain[3]) == [] and b.waiting() == [plain[3]] and b.flush() == [[plain[3]]] and b.waiting() == []


def test_a_crash_in_a_batch_keeps_its_batch_mates_results(tmp_path, fake_run):
    jobs = _jobs(tmp_path, ["ok1", "crash2", "ok3", "ok4"])
    stats, rows, progress = _pool(tmp_path, [jobs])
    assert {n: r["status"] for n, r in rows.items()} == {"ok1": "done", "crash2": "crash", "ok3": "done",
                                                          "ok4": "done"}
    assert stats.ran == 4 and stats.left == 0
    assert progress.updates[0] == "ok1" and sorted(progress.updates) == ["crash2", "ok1", "ok3", "ok4"]
    assert "killed by signal 9" in rows["crash2"]["error"] and "judging crash2" in rows["crash2"]["error"]
    for name in ("ok1", "ok3", "ok4"):  # each in its own run folder, paths in its files pointing there
        d = Path(rows[name]["run_dir"])
        assert d.parent == tmp_path / "hunt" / "runs" and json.loads((d / "report.json").read_text())["where"] == str(d)
        assert rows[name]["executed"] == 3
    log = (Path(rows["ok3"]["run_dir"]) / "job.log").read_text()
    assert "judging ok3" in log and "ok1" not in log and "crash2" not in log  # its own part of the batch's log
    assert not list((tmp_path / "hunt" / "runs" / ".tmp").glob("*"))


def test_a_program_that_hangs_times_out_alone_with_its_own_clock(tmp_path, fake_run):
    jobs = _jobs(tmp_path, ["slow1", "slow2", "hang3", "ok4"], timeout=2.5)
    t0 = time.monotonic()
    stats, rows, _ = _pool(tmp_path, [jobs])
    assert {n: r["status"] for n, r in rows.items()} == {"slow1": "done", "slow2": "done", "hang3": "timeout",
                                                          "ok4": "done"}
    assert "no result within the job timeout of 2 s" in rows["hang3"]["error"]
    assert time.monotonic() - t0 < 60 and stats.ran == 4


def test_after_the_deadline_a_batch_ends_with_its_running_program(tmp_path, fake_run):
    jobs = _jobs(tmp_path, ["slow1", "slow2", "slow3"])
    stats, rows, _ = _pool(tmp_path, [jobs], deadline=time.monotonic() + 0.3)
    assert rows["slow1"]["status"] == "done"
    assert rows["slow2"]["status"] == rows["slow3"]["status"] == "interrupted"  # not judged: a resume runs them
    assert stats.left == 2 and stats.budget_spent


def test_a_resumed_hunt_takes_a_half_finished_batchs_programs_first(tmp_path):
    from eqsat_test.runners.campaign.hunt import Feeder, HuntOptions, HuntState
    from eqsat_test.runners.campaign.hunt_programs import ProgramTable
    opts = HuntOptions(minutes=1, seed=4, programs_per_job=3, sweep_every=0)
    with Store(tmp_path / "campaign.sqlite") as store:
        table = ProgramTable(store)
        f1 = Feeder(opts, tmp_path, table, store, HuntState())
        try:
            batch = f1(1)[0]
        finally:
            f1.close()
        assert 1 <= len(batch) <= 3 and len({j["key"] for j in batch}) == len(batch)
        store.mark_running(batch)  # the batch started; its first program ended; then the hunt was killed
        store.record_job(batch[0], {"status": "done", "exit_code": 0, "started": 0.0, "finished": 1.0,
                                    "report": {"findings": []}})
        store.mark_interrupted()
        made = table.next_index(4)
        f2 = Feeder(opts, tmp_path, table, store, HuntState())
        try:
            again = f2(1)
        finally:
            f2.close()
        got = [j["key"] for b in again for j in b]
        left = [j["key"] for j in batch[1:]]
        assert got[:len(left)] == left and batch[0]["key"] not in got
        if len(again[0]) == 3 and len(left) == 2:  # the batch not full was filled up with a new program
            assert table.next_index(4) > made


CRASH_AT_LOAD = '''import os
import signal

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + 1


def get_inputs():
    os.kill(os.getpid(), signal.SIGKILL)
    return [torch.randn(4, 8)]
'''

SMALL = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return {body}


def get_inputs():
    return [torch.randn(4, 8)]
'''


@pytest.mark.slow
def test_the_real_run_a_crash_in_a_batch_keeps_its_batch_mates_verdicts(tmp_path):
    """`eqsat-test run A B C` as a batch, B killing its process: A's and C's verdicts are stored, B is a crash."""
    progs = tmp_path / "programs"
    progs.mkdir()
    (progs / "a_exp.py").write_text(SMALL.format(body="torch.exp(x) * 2"))
    (progs / "b_crash.py").write_text(CRASH_AT_LOAD)
    (progs / "c_relu.py").write_text(SMALL.format(body="torch.relu(x) + 1"))
    s = Spec(path=tmp_path / "hunt.json", name="t", models=[progs / n for n in ("a_exp.py", "b_crash.py", "c_relu.py")],
             rule_sets=[[]], backends=["inductor"], devices=["cpu"], variants=1, seeds=[0], inputs="given",
             run_args=["--no-sweep", "--sat-seconds", "1", "--no-minimize"], job_timeout=600, variant_timeout=120)
    stats, rows, _ = _pool(tmp_path, [make_jobs(s)])
    assert {n: r["status"] for n, r in rows.items()} == {"a_exp": "done", "b_crash": "crash", "c_relu": "done"}
    for name in ("a_exp", "c_relu"):
        d = Path(rows[name]["run_dir"])
        assert (d / "report.json").is_file() and (d / "bundle" / "manifest.json").is_file()
        assert rows[name]["executed"] >= 1
    assert stats.ran == 3


def test_a_batch_as_a_ray_task_brings_back_each_programs_folder_and_its_leftovers(tmp_path, fake_run):
    """ray_batch, called here as a Ray worker calls it: the models travel as bytes, the run folder comes back as a
    tarball holding a folder per finished program; the crashed program and the ones after it come back as leftovers."""
    from eqsat_test.runners.campaign.batch import ray_batch, untar
    jobs = _jobs(tmp_path, ["ok1", "crash2", "ok3"])
    models = [{"path": str(tmp_path / "elsewhere" / Path(j["model"]).name), "sha": "x",
               "content": Path(j["model"]).read_bytes()} for j in jobs]  # a node without the programs' folder
    res = ray_batch({"jobs": jobs, "campaign_id": "cid", "models": models}, [])
    assert [(d["key"], d["folder"], d["outcome"]["status"]) for d in res["done"]] == [(jobs[0]["key"], "ok1", "done")]
    assert res["left"] == [[jobs[1]["key"]], [jobs[2]["key"]]]
    untar(res["tar"], tmp_path / "back")
    report = json.loads((tmp_path / "back" / "ok1" / "report.json").read_text())
    assert report["where"] == f"{res['made_in']}/ok1" and (tmp_path / "back" / "ok1" / "job.log").is_file()

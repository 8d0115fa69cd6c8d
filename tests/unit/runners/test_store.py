"""Tests of runners/campaign/store.py: one transaction per job, dedup by signature, resume, JSONL export,
and a writer killed with SIGKILL at random moments that loses nothing and duplicates nothing."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from eqsat_test.runners.campaign.store import Store
from eqsat_test.runners.findings.write import signature

REPO = Path(__file__).resolve().parents[3]


def _job(i: int) -> dict:
    return {"key": f"job{i:04d}", "model": f"/models/m{i % 7}.py", "model_sha": f"sha{i % 7}",
            "rule_set": ["basic"], "rule_set_version": "v1", "backend": "eager", "device": "cpu", "seed": 0,
            "torch_version": "2.x", "options": {"variants": 2}}


def _findings(i: int) -> list[dict]:
    """Deterministic fake findings of job i: a few shared signatures, some repeated within the job."""
    out = []
    for k in range(i % 4):
        kind = ("miscompile", "unsound-rewrite", "compile-crash")[k % 3]
        out.append({"kind": kind, "backend": "eager", "device": "cpu", "ops": [f"op{(i + k) % 3}"],
                    "rules": [f"rule{k}"], "variant": f"g0_v{k:03d}", "detail": f"job {i} finding {k}",
                    "repro": f"/runs/job{i}/findings/{k}/repro.py" if kind != "unsound-rewrite" else None})
    return out


def _outcome(i: int) -> dict:
    t = 1000.0 + i
    return {"status": "done", "exit_code": 1, "started": t - 0.5, "finished": t, "run_dir": f"/runs/job{i}",
            "report": {"variants": 2, "executed": 3, "torch_version": "2.x", "findings": _findings(i),
                       "stats": {}},
            "rules": {"names": ["rule0", "rule1", "rule2"], "fired": {"rule0": 1}}}


def _snapshot(store: Store) -> dict:
    jobs = {j["key"]: (j["status"], j["compiler_bugs"], j["notes"]) for j in store.jobs()}
    findings = {f["signature"]: (f["kind"], f["count"], f["jobs"], f["first_seen"], f["last_seen"],
                                 sorted((s["job_key"], s["count"]) for s in f["sightings"]))
                for f in store.findings()}
    return {"jobs": jobs, "findings": findings}


def test_record_dedupes_by_signature_and_never_twice(tmp_path):
    with Store(tmp_path / "c.sqlite") as st:
        for i in range(12):
            st.mark_running(_job(i))
            assert st.record_job(_job(i), _outcome(i))
        before = _snapshot(st)
        # recording a finished job again writes nothing
        assert not st.record_job(_job(5), _outcome(5))
        st.mark_running(_job(5))
        assert _snapshot(st) == before
        assert st.check() == []
        fs = st.findings()
        # the same (kind, ops, rules, backend, device) across jobs is one finding
        sigs = {signature(f) for i in range(12) for f in _findings(i)}
        assert {f["signature"] for f in fs} == sigs
        total = sum(len(_findings(i)) for i in range(12))
        assert sum(f["count"] for f in fs) == total
        for f in fs:
            assert f["first_seen"] <= f["last_seen"]
            assert f["jobs"] == len(f["sightings"])
            assert bool(f["compiler_bug"]) == (f["kind"] != "unsound-rewrite")
        assert st.finished_keys() == {f"job{i:04d}" for i in range(12)}
        assert st.counts()["jobs"] == {"done": 12}


def test_running_failed_retry_and_status(tmp_path):
    with Store(tmp_path / "c.sqlite") as st:
        j = _job(1)
        st.mark_running(j)
        assert st.status_of([j["key"], "nope"]) == {j["key"]: "running"}
        assert j["key"] not in st.finished_keys()
        st.record_job(j, {"status": "timeout", "exit_code": None, "started": 1.0, "finished": 2.0,
                          "report": None, "error": "no result within the job timeout"})
        assert st.status_of([j["key"]]) == {j["key"]: "timeout"}
        assert st.retry_failed() == 1
        assert j["key"] not in st.finished_keys()
        st.mark_running(j)
        assert st.record_job(j, _outcome(1))
        row = st.jobs()[0]
        assert row["status"] == "done" and row["attempts"] == 2 and row["run_dir"] == "/runs/job1"


def test_export_jsonl(tmp_path):
    with Store(tmp_path / "c.sqlite") as st:
        st.set_meta(name="t", spec="/x.toml")
        for i in range(6):
            st.record_job(_job(i), _outcome(i))
        n = st.export_jsonl(tmp_path / "out.jsonl")
        nf, nc, ng = len(st.findings()), len(st.clusters()), len(st.note_groups())
    lines = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert nc and ng
    assert n == len(lines) == 1 + 6 + nc + ng + nf
    assert [x["type"] for x in lines[7:7 + nc + ng]] == ["cluster"] * nc + ["note-group"] * ng
    assert lines[0]["type"] == "campaign" and lines[0]["name"] == "t"
    assert [x["type"] for x in lines[1:7]] == ["job"] * 6
    f = [x for x in lines if x["type"] == "finding"]
    assert all(x["sightings"] and x["signature"] for x in f)


WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {repo!r})
    sys.path.insert(0, {here!r})
    from test_store import _job, _outcome
    from eqsat_test.runners.campaign.store import Store
    st = Store(sys.argv[1])
    done = st.finished_keys()
    print("ready", flush=True)
    for i in range({n}):
        j = _job(i)
        if j["key"] in done:
            continue
        st.mark_running(j)
        st.record_job(j, _outcome(i))
        time.sleep(0.004)  # >= 0.6 s of writing in all: every kill below lands mid-way
    print("finished", flush=True)
""")


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_sigkill_at_random_moments_loses_and_duplicates_nothing(tmp_path):
    n = 150
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(repo=str(REPO), here=str(Path(__file__).parent), n=n))
    with Store(tmp_path / "ref.sqlite") as ref:
        for i in range(n):
            ref.record_job(_job(i), _outcome(i))
        want = _snapshot(ref)
    seed = int(os.environ.get("EQSAT_TEST_SEED", "8036"))  # set it to explore other kill points
    rng = random.Random(seed)
    db = tmp_path / "killed.sqlite"
    kills = 0
    for attempt in range(12):
        p = subprocess.Popen([sys.executable, str(script), str(db)], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        if attempt < 8:
            time.sleep(rng.uniform(0.0, 0.4))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
        p.wait()
        with Store(db) as st:
            assert st.check() == [], f"seed {seed}"
            if len(st.finished_keys()) == n:
                got = _snapshot(st)
                break
    assert kills >= 1, f"seed {seed}: the writer was never killed mid-way"
    assert got == want, f"seed {seed}"


def test_plan_interrupted_jobs_and_runs(tmp_path):
    with Store(tmp_path / "c.sqlite") as st:
        jobs = [_job(i) for i in range(6)]  # models m0..m5
        jobs.append({**_job(7), "model": "/models/m0.py"})  # a second job of m0
        st.set_plan(jobs)
        assert st.plan_status() == {"jobs": 7, "finished": 0, "done": 0, "left": 7, "models": 6, "models_done": 0}
        for j in jobs[:3]:
            st.mark_running(j)
        st.record_job(jobs[1], _outcome(1))
        st.record_job(jobs[2], {**_outcome(2), "status": "timeout", "report": None})
        assert st.mark_interrupted([jobs[0]["key"], jobs[1]["key"]]) == 1  # a finished job stays finished
        assert {j["key"]: j["status"] for j in st.jobs()} == {"job0000": "interrupted", "job0001": "done",
                                                               "job0002": "timeout"}
        assert "job0000" not in st.finished_keys()  # interrupted: the next run runs it
        st.mark_running(jobs[0])
        assert st.status_of(["job0000"]) == {"job0000": "running"}
        assert st.mark_interrupted() == 1
        assert st.plan_status() == {"jobs": 7, "finished": 2, "done": 1, "left": 5, "models": 6, "models_done": 2}
        st.set_plan(jobs[:2])  # a new run's plan replaces the old one
        assert [p["key"] for p in st.plan()] == ["job0000", "job0001"]
        st.add_run({"jobs_at_once": 2})
        st.add_run({"jobs_at_once": 3})
        assert [r["jobs_at_once"] for r in st.meta()["runs"]] == [2, 3]


def test_root_causes_merge_over_jobs_and_notes_stay_one_line_per_cause(tmp_path):
    """Jobs' clusters (results.json's "clusters") merge by key in the store: sightings summed, the seed of
    any job marks the cause as one the unmodified model shows; note groups merge per (model, kind, cause)."""
    from eqsat_test.runners.findings.clusters import cluster_findings
    from eqsat_test.runners.findings.notes import aggregate_notes

    def report(i: int, seed: bool) -> dict:
        f = {"kind": "seed-miscompile" if seed else "miscompile", "variant": "g0_seed" if seed else f"g0_v{i:03d}",
             "graph": "g0", "backend": "inductor", "device": "cpu", "rules": [] if seed else [f"r{i}"], "seed": seed,
             "ops": ["torch.expm1"], "min_ops": ["torch.expm1"], "input_set": "given", "leaf": "[0]",
             "detail": "[0] x: 3 exceed the fp64 bound", "id": f"00{i}", "repro": f"/runs/job{i}/f/repro.py"}
        notes = [{"kind": "nondeterministic", "variant": f"g0_v{k:03d}", "graph": "g0", "backend": "inductor",
                  "device": "cuda", "ops": ["torch.conv_transpose2d"], "detail": "nondeterministic"} for k in range(5)]
        model = f"/models/m{i % 2}.py"
        return {"model": model, "findings": [f] + notes, "stats": {},
                "clusters": [c.to_dict() for c in cluster_findings([f], model)],
                "note_groups": [g.to_dict() for g in aggregate_notes(notes, model)]}

    with Store(tmp_path / "c.sqlite") as st:
        for i, seed in enumerate([False, False, True, False]):
            out = {"status": "done", "exit_code": 1, "started": 10.0 + i, "finished": 11.0 + i,
                   "run_dir": f"/runs/job{i}", "report": report(i, seed)}
            assert st.record_job(_job(i), out)
        assert not st.record_job(_job(0), out)  # never twice
        assert st.check() == []
        [c] = st.clusters()
        assert c.count == 4 and c.pattern == ("expm1",) and c.seed_fails and c.models == ("/models/m0.py", "/models/m1.py")
        assert len(st.cluster_sightings()[c.key]) == 4
        groups = st.note_groups()
        assert [(g.model, g.cause, g.count) for g in groups] == [("/models/m0.py", "conv_transpose2d", 10),
                                                                ("/models/m1.py", "conv_transpose2d", 10)]
        assert st.counts()["root_causes"] == 1
        # the campaign summary counts distinct root causes and ends with their table
        from eqsat_test.runners.campaign.run import summarize, text_summary
        s = summarize(st, tmp_path)
        assert s["root_causes"] == 1 and s["exposed_only_by_rewrites"] == 0 and s["clusters"][0]["jobs"] == 4
        text = text_summary(s)
        assert "FOUND 1 distinct root cause(s) (exposed only by rewrites: 0 of 1)" in text
        assert text.splitlines()[-4].strip().startswith("1. [miscompile] expm1: exceeds bound")
        assert text.splitlines()[-3].startswith("  notes (not compiler bugs), by kind: nondeterministic 20")


def test_a_store_from_before_clusters_gets_its_jobs_root_causes_once(tmp_path):
    import sqlite3
    with Store(tmp_path / "c.sqlite") as st:
        for i in range(6):
            st.record_job(_job(i), _outcome(i))
        n = len(st.clusters())
    assert n
    db = sqlite3.connect(tmp_path / "c.sqlite")  # as an older eqsat-test left it: no clusters, no mark
    for t in ("clusters", "cluster_sightings", "note_groups"):
        db.execute(f"DELETE FROM {t}")
    db.execute("DELETE FROM meta WHERE key='clusters_from_jobs'")
    db.commit()
    db.close()
    with Store(tmp_path / "c.sqlite") as st:
        assert len(st.clusters()) == n and st.check() == []
    with Store(tmp_path / "c.sqlite") as st:  # once: a second opening adds nothing
        assert len(st.clusters()) == n and st.check() == []

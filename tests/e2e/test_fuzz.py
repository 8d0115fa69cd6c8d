"""End to end: `eqsat-test fuzz --minutes` on the CPU, tiny: programs are generated, judged as campaign jobs with the
real pipeline, stored with their seeds, summarized as JSON; run again, the hunt goes on from the store."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import warm_server

from eqsat_test.hunt.program import draw_program
from eqsat_test.hunt.sources import resolve_source
from eqsat_test.hunt.windows import window_of

CORPUS = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus"


def fuzz(*args, timeout=1500):
    return warm_server().run(["fuzz", *args], cli=True, cwd=Path("/"), timeout=timeout)


@pytest.mark.slow
def test_fuzz_minutes_judges_stores_and_resumes(tmp_path):
    out = tmp_path / "hunt"
    tiny = ["--device", "cpu", "-j", "1", "--variants", "2", "--sweep-every", "0", "--seed", "5", "--out", str(out)]
    r = fuzz("--minutes", "0.2", "--json", *tiny)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    s = json.loads(r.stdout)
    for key in ("programs", "variants", "root_causes", "ledger_matches", "internal_errors", "discarded", "judged"):
        assert key in s, key
    assert s["programs"] >= 1 and s["judged"] >= 1 and s["judged"] + s["internal_errors"] >= 1
    assert "programs/min" not in r.stdout and "eqsat-test: hunt" in r.stderr  # progress on stderr, JSON alone on stdout
    db = sqlite3.connect(out / "campaign.sqlite")
    rows = db.execute("SELECT seed, idx, status, source FROM programs ORDER BY idx").fetchall()
    assert rows[0][:2] == (5_000_000, 0)
    ok = [row for row in rows if row[2] == "ok"]
    assert ok and ok[0][3] == draw_program(ok[0][0]).source()  # the stored program replays from its seed
    jobs = db.execute("SELECT model, status FROM jobs").fetchall()
    assert any(st == "done" for _, st in jobs) and all(Path(m).parent == out / "programs" for m, _ in jobs)
    db.close()

    again = fuzz("--minutes", "0.1", *tiny)  # resumes: the next seed follows, nothing is judged twice
    assert again.returncode in (0, 1), again.stderr[-3000:]
    assert f"{len(rows)} programs of seed 5 made before" in again.stderr
    db = sqlite3.connect(out / "campaign.sqlite")
    idx = [i for (i,) in db.execute("SELECT idx FROM programs ORDER BY idx")]
    assert idx == list(range(len(idx))) and len(idx) > len(rows)
    assert db.execute("SELECT COUNT(*), COUNT(DISTINCT model) FROM jobs").fetchone()[0] == \
        db.execute("SELECT COUNT(DISTINCT key) FROM jobs").fetchone()[0]
    db.close()
    assert "hunt:" in again.stdout and "judged" in again.stdout


@pytest.mark.slow
def test_fuzz_windows_only_judges_windows_of_real_graphs(tmp_path):
    """--windows-from FILES --windows-only: every program is a window of a corpus model's graph, stored with its
    source file and seed, judged like a generated one, and its stored file is the window its seed cuts again."""
    out = tmp_path / "windows"
    models = [CORPUS / "conv_resnet_basic_block.py", CORPUS / "transformer_gpt2_block.py"]
    r = fuzz("--minutes", "0.2", "--json", "--device", "cpu", "-j", "1", "--variants", "2", "--sweep-every", "0",
             "--seed", "9", "--out", str(out), "--windows-from", str(models[0]), "--windows-from", str(models[1]),
             "--windows-only")
    assert r.returncode in (0, 1), r.stderr[-3000:]
    s = json.loads(r.stdout)
    assert s["programs"] >= 1 and s["judged"] >= 1 and not s["internal_errors"], s
    db = sqlite3.connect(out / "campaign.sqlite")
    rows = db.execute("SELECT seed, version, status, source, record FROM programs ORDER BY idx").fetchall()
    assert rows and all(v == "windows-1" for _, v, _, _, _ in rows)
    for seed, _, status, source, record in rows:
        rec = json.loads(record)
        assert rec["kind"] == "window" and rec["source"] in {f"benchmarks/corpus/{m.name}" for m in models}
        if status == "ok":
            assert source == window_of(seed, resolve_source(rec["source"])).source()
    judged = [m for (m,) in db.execute("SELECT model FROM jobs WHERE status='done'")]
    assert judged and all(Path(m).parent == out / "programs" for m in judged)
    db.close()


@pytest.mark.slow
@pytest.mark.ray
def test_fuzz_on_a_local_ray_cluster(tmp_path):
    """--executor ray: the programs travel with their tasks (two a task), each program's run folder comes back, the
    store is the same kind."""
    ray = pytest.importorskip("ray")
    from eqsat_test.runners.campaign.hunt import HuntOptions, run_hunt
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        s = run_hunt(HuntOptions(minutes=0.1, executor="ray", variants=2, sweep_every=0, seed=7, programs_per_job=2),
                     tmp_path / "ray")
    finally:
        ray.shutdown()
    assert s["run"]["ran"] >= 1 and s["judged"] + s["internal_errors"] >= 1
    db = sqlite3.connect(tmp_path / "ray" / "campaign.sqlite")
    runs = [Path(d) for (d,) in db.execute("SELECT run_dir FROM jobs WHERE status='done'")]
    assert runs and all(d.parent == tmp_path / "ray" / "runs" and (d / "report.json").is_file() for d in runs)
    db.close()

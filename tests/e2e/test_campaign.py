"""End-to-end tests of `eqsat-test campaign`: specs, a campaign over several models with the real pipeline,
resume after SIGKILL at random moments, jobs that hang or crash, budgets, Ray missing, shipping files."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import repo_env, warm_server

from eqsat_test.runners.campaign.jobs import make_jobs, processes_with_env, ray_job
from eqsat_test.runners.campaign.spec import load_spec
from eqsat_test.runners.campaign.store import Store

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models" / "campaign"
RULES = MODELS / "rules"  # small exact rules + two deliberately wrong ones (unsound-rewrite notes)
# Keep jobs cheap and deterministic: sweeps have a time budget (results would depend on machine load),
# minimization and debug artifacts cost many compiles.
INJECTED_BUG = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"'  # Inductor's test-only miscompile
CHEAP_RUN = ["--no-sweep", "--no-minimize", "--no-artifacts",
             "--allow-unsound-rules"]  # RULES' wrong ones are meant to be used: they make the unsound-rewrite notes


def campaign(*args, timeout=900) -> subprocess.CompletedProcess:
    """`eqsat-test campaign *args` from / (through tests/conftest.py's warm_server: a process of its own)."""
    return warm_server().run(["campaign", *args], cli=True, cwd=Path("/"), timeout=timeout)


def campaign_here(capsys, *args) -> tuple[int, str, str]:
    """`eqsat-test campaign ...` in this process (cheap: for commands that run no job)."""
    from eqsat_test.runners.cli.main import main
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["campaign", *map(str, args)])
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err


def write_spec(path: Path, **kw) -> Path:
    budget = kw.pop("budget", {})
    kw.setdefault("run_args", CHEAP_RUN)
    lines = [f"{k} = {json.dumps(v)}" for k, v in kw.items()]
    if budget:
        lines += ["[budget]"] + [f"{k} = {json.dumps(v)}" for k, v in budget.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def rel(p: Path, base: Path) -> str:
    return os.path.relpath(p, base)


def snapshot(out: Path) -> dict:
    with Store(out / "campaign.sqlite") as st:
        assert st.check() == []
        jobs = {j["key"]: j["status"] for j in st.jobs()}
        findings = {f["signature"]: (f["kind"], f["count"], f["jobs"],
                                     sorted((s["job_key"], s["count"]) for s in f["sightings"]))
                    for f in st.findings()}
    return {"jobs": jobs, "findings": findings}


def leftovers(out: Path) -> list[int]:
    from eqsat_test.runners.campaign.run import campaign_id_of
    return processes_with_env(f"EQSAT_CAMPAIGN={campaign_id_of(out)}")


# ---------------------------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------------------------

def test_spec_models_rule_sets_defaults_and_dry_run(tmp_path, capsys):
    spec = write_spec(tmp_path / "s.toml", models=[rel(MODELS, tmp_path) + "/*.py", rel(REPO / "examples", tmp_path),
                                                  rel(MODELS / "add_mul.py", tmp_path)],
                      exclude=["int_*.py"], rule_sets=[["default"], [rel(RULES, tmp_path), "layout"]],
                      backends=["eager", "aot_eager"], seeds=[0, 1], variants=2)
    sp = load_spec(spec)
    names = [m.name for m in sp.models]
    assert "add_mul.py" in names and names.count("add_mul.py") == 1  # listed twice, kept once
    assert "int_ops.py" not in names and "mlp.py" in names
    assert sp.rule_sets == [[], [rel(RULES, tmp_path), "layout"]]
    assert sp.devices == ["cpu"] and sp.job_timeout == 1800 and sp.total_seconds is None
    jobs = make_jobs(sp)
    assert len(jobs) == len(sp.models) * 2 * 2 * 2
    assert len({j["key"] for j in jobs}) == len(jobs)
    # the key follows content, not names: same spec again gives the same keys
    assert [j["key"] for j in make_jobs(load_spec(spec))] == [j["key"] for j in jobs]
    rc, out, err = campaign_here(capsys, spec, "--dry-run", "--json")
    assert rc == 0, err
    listed = json.loads(out)
    assert listed["count"] == len(jobs) and {j["status"] for j in listed["jobs"]} == {"pending"}
    assert not (tmp_path / "s-out").exists()  # a dry run writes nothing


def test_spec_errors_are_usage_errors(tmp_path, capsys):
    rc, _, err = campaign_here(capsys, write_spec(tmp_path / "a.toml", models=["nope/*.py"]), "--dry-run")
    assert rc == 4 and "matched no .py file" in err
    rc, _, err = campaign_here(capsys, write_spec(tmp_path / "b.toml", models=[str(MODELS)], colour="red"), "--dry-run")
    assert rc == 4 and "unknown key" in err
    rc, _, err = campaign_here(capsys, write_spec(tmp_path / "c.toml", models=[str(MODELS)],
                                                  rule_sets=[["no_such_rules"]]), "--dry-run")
    assert rc == 4 and "no_such_rules" in err
    (tmp_path / "d.toml").write_text("models = [\n")
    rc, _, err = campaign_here(capsys, tmp_path / "d.toml", "--dry-run")
    assert rc == 4 and "not valid TOML" in err
    rc, _, err = campaign_here(capsys, tmp_path, "--export-jsonl", tmp_path / "x.jsonl")
    assert rc == 4 and "not a campaign spec" in err


def test_ray_executor_without_ray_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as when not installed
    spec = write_spec(tmp_path / "s.toml", models=[str(MODELS / "add_mul.py")], backends=["eager"])
    rc, _, err = campaign_here(capsys, spec, "--executor", "ray")
    assert rc == 4, err
    assert "pip install 'eqsat-test[ray]'" in err
    assert not (tmp_path / "s-out").exists()  # refused before anything was written


# ---------------------------------------------------------------------------------------------
# A campaign over many models, the real pipeline
# ---------------------------------------------------------------------------------------------

def test_campaign_over_many_models(tmp_path):
    # Twice as many jobs as jobs at once (a queue), every convention of model file (KernelBench,
    # minifier `args`, a module instance), and a model the wrong rules fire on (unsound-rewrite
    # notes). Each job is ~10 CPU-s, nearly all process start-up: 8 models cost 40 CPU-s more.
    models = [rel(MODELS / m, tmp_path) for m in ("relu_chain.py", "abs_neg.py", "layernorm.py", "cat_split.py")]
    spec = write_spec(tmp_path / "many.toml", name="many", models=models,
                      rule_sets=[[rel(RULES, tmp_path)]], backends=["eager"], variants=2, inputs="given",
                      budget={"job_timeout": 600})
    out = tmp_path / "many-out"
    n_models = len(load_spec(spec).models)
    assert n_models == 4
    t0 = time.monotonic()
    r = campaign(spec, "--json", "--jobs", "2")
    wall = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[-3000:]
    summary = json.loads(r.stdout)
    assert summary["jobs"] == {"total": n_models, "done": n_models}, summary["jobs"]
    assert summary["run"]["ran"] == n_models
    assert f"[{n_models}/{n_models}]" in r.stderr  # plain progress lines with --json
    notes = [f for f in summary["findings"] if f["kind"] == "unsound-rewrite"]
    assert notes and any(any(x.startswith("test_wrong_") for x in f["rules"]) for f in notes)
    assert summary["compiler_bugs"] == 0  # eager vs eager: nothing to find
    assert summary["root_causes"] == 0 and summary["clusters"] == []
    keys = [(g["model"], g["kind"], g["cause"]) for g in summary["note_groups"]]
    assert keys and len(keys) == len(set(keys))  # one line per model, kind and cause
    print(f"\n{n_models} jobs (eager, -n 2) on 2 workers: {wall:.1f} s")

    snap = snapshot(out)
    assert set(snap["jobs"].values()) == {"done"}
    runs = sorted((out / "runs").iterdir())
    assert [p.name for p in runs if p.name.startswith(".")] in ([], [".tmp"])
    finished = [p for p in runs if not p.name.startswith(".")]
    assert len(finished) == n_models
    for p in finished:
        assert (p / "report.json").is_file() and (p / "bundle" / "manifest.json").is_file()
        assert not (p / "scratch").exists()
        assert str(out / "runs" / ".tmp") not in (p / "report.json").read_text()
    assert not leftovers(out)

    # Resume: everything done, nothing runs, nothing changes.
    r = campaign(spec, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["run"] == {**json.loads(r.stdout)["run"], "ran": 0,
                                                                  "skipped": n_models}
    assert snapshot(out) == snap
    r = campaign(spec, "--dry-run", "--json")
    assert {j["status"] for j in json.loads(r.stdout)["jobs"]} == {"done"}

    # Export, from the spec and from the folder.
    r = campaign(out, "--export-jsonl", tmp_path / "a.jsonl")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert sum(x["type"] == "job" for x in lines) == n_models
    assert {x["signature"] for x in lines if x["type"] == "finding"} == set(snap["findings"])
    assert campaign(spec, "--export-jsonl", tmp_path / "b.jsonl").returncode == 0
    assert (tmp_path / "b.jsonl").read_text().count('"type": "job"') == n_models

    # One Inductor job, from a second spec, into the same campaign folder: Inductor's own test-only
    # relu bug makes a real compiler-bug finding (exit 1); its cache is the worker's own.
    spec2 = write_spec(tmp_path / "one.toml", name="many", models=[str(MODELS / "relu_chain.py")],
                       rule_sets=[[str(RULES)]], backends=[INJECTED_BUG], variants=2, inputs="given",
                       budget={"job_timeout": 900})
    r = campaign(spec2, "--json", "--out", out)
    assert r.returncode == 1, r.stderr[-3000:]
    s2 = json.loads(r.stdout)
    assert s2["jobs"] == {"total": 1, "done": 1}
    bugs = [f for f in s2["findings"] if f["compiler_bug"]]
    assert bugs and all(f["backend"] == INJECTED_BUG for f in bugs)
    # the seed and its variants hit one injected relu bug: one root cause, the seed's
    assert s2["root_causes"] == 1 and s2["clusters"][0]["seed_fails"] and s2["exposed_only_by_rewrites"] == 0
    assert all(Path(f["repro"]).is_file() and str(out / "runs") in f["repro"] for f in bugs if f["repro"])
    assert (out / "cache" / "worker0" / "inductor").is_dir()
    assert len(snapshot(out)["jobs"]) == n_models + 1

    # Per-rule statistics read campaign folders too.
    r = warm_server().run(["rules", "stats", out, "--json"], cli=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert any(row["rule"] == "test_wrong_relu_is_abs" and row["unsound"] for row in json.loads(r.stdout))


# ---------------------------------------------------------------------------------------------
# Kill -9 at random moments, resume: the store ends as an uninterrupted run's
# ---------------------------------------------------------------------------------------------

def test_sigkill_and_resume_equals_uninterrupted(tmp_path):
    models = [MODELS / m for m in ("relu_chain.py", "add_mul.py", "abs_neg.py")]
    kw = dict(name="k", models=[str(m) for m in models], rule_sets=[[str(RULES)]], backends=["eager"],
              variants=2, inputs="given", budget={"job_timeout": 600})
    spec = write_spec(tmp_path / "k.toml", **kw)
    ref_out, out = tmp_path / "ref", tmp_path / "killed"

    t0 = time.monotonic()
    r = campaign(spec, "--json", "--jobs", "2", "--out", ref_out)
    assert r.returncode == 0, r.stderr[-3000:]
    uninterrupted = time.monotonic() - t0
    want = snapshot(ref_out)
    assert len(want["jobs"]) == len(models) and want["findings"]

    seed = int(os.environ.get("EQSAT_TEST_SEED", time.time_ns() % 100000))
    rng = random.Random(seed)
    kills = 0
    for attempt in range(8):
        p = subprocess.Popen([sys.executable, "-m", "eqsat_test.runners.cli", "campaign", str(spec), "--json", "--jobs", "2",
                              "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=repo_env(), cwd="/")
        if attempt < 3:
            time.sleep(rng.uniform(0.5, max(1.0, uninterrupted * 0.8)))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
        p.wait(timeout=900)
        if (out / "campaign.sqlite").is_file():
            with Store(out / "campaign.sqlite") as st:
                assert st.check() == [], f"seed {seed}"
        if p.returncode == 0:
            break
    assert kills >= 1, f"seed {seed}"
    got = snapshot(out)
    assert got == want, f"seed {seed}: kills={kills}"
    time.sleep(0.5)
    assert not leftovers(out), f"seed {seed}: processes of the killed campaign still running"
    assert not [p for p in (out / "runs").iterdir() if p.name != ".tmp" and p.name.startswith(".")]
    print(f"\nuninterrupted {uninterrupted:.1f} s; killed {kills} times (seed {seed}), same store after resume")


# ---------------------------------------------------------------------------------------------
# Isolation: a hang, a crash and a bad file cost one job each; budgets
# ---------------------------------------------------------------------------------------------

def test_hang_crash_and_bad_input_cost_one_job_each(tmp_path):
    spec = write_spec(tmp_path / "bad.toml", models=[str(MODELS / "bad")], rule_sets=[[str(RULES)]],
                      backends=["eager"], variants=2, inputs="given",
                      # the run's --time-budget is half of it and counts from its start (imports, the user rules'
                      # check): 30 s lets the segfaulting model be loaded on a loaded machine
                      budget={"job_timeout": 60})
    out = tmp_path / "bad-out"
    r = campaign(spec, "--json", "--jobs", "3")
    assert r.returncode == 3, r.stderr[-3000:]  # a job crashed inside eqsat-test
    with Store(out / "campaign.sqlite") as st:
        status = {Path(j["model"]).name: j for j in st.jobs()}
    assert status["hang_on_load.py"]["status"] == "timeout"
    # stopped by its run's time budget inside loading (and reported), or else killed at the job timeout
    assert re.match(r"the run's time budget ran out while loading|no result within the job timeout",
                    status["hang_on_load.py"]["error"]), status["hang_on_load.py"]["error"][:300]
    assert status["segfault_on_load.py"]["status"] == "crash"
    assert "signal 11" in status["segfault_on_load.py"]["error"]
    assert status["not_a_model.py"]["status"] == "bad-input"
    assert not leftovers(out)  # the hung job's whole process tree is gone
    # each job without verdicts is named, by status, in the summary: what it would have found is in no table
    s = json.loads(r.stdout)
    assert {(u["model"], u["status"]) for u in s["unjudged"]} == {
        ("hang_on_load.py", "timeout"), ("segfault_on_load.py", "crash"), ("not_a_model.py", "bad-input")}, s["unjudged"]
    from eqsat_test.runners.campaign.run import text_summary
    text = text_summary(s)
    assert "no verdicts from 1 timeout job(s), not judged: hang_on_load.py cpu" in text, text
    assert "no verdicts from 1 crash job(s), not judged: segfault_on_load.py cpu" in text, text
    # Failed jobs are finished: a resume skips them; --retry-failed runs them again.
    r = campaign(spec, "--json")
    assert json.loads(r.stdout)["run"]["ran"] == 0
    r = campaign(spec, "--json", "--retry-failed", "--job-timeout", "5")
    assert json.loads(r.stdout)["run"]["ran"] == 2  # the timeout and the crash; bad input stays


def test_total_seconds_budget_stops_and_resumes(tmp_path):
    spec = write_spec(tmp_path / "b.toml", models=[str(MODELS / m) for m in ("add_mul.py", "relu_chain.py", "abs_neg.py")],
                      rule_sets=[[str(RULES)]], backends=["eager"], variants=2, inputs="given",
                      budget={"total_seconds": 1})
    out = tmp_path / "b-out"
    r = campaign(spec, "--json", "--jobs", "1")
    assert r.returncode == 2, r.stderr[-2000:]
    s = json.loads(r.stdout)
    # the job running when the budget ran out finished; the other two never started
    assert s["run"]["budget_spent"] and s["run"]["ran"] == 1 and s["run"]["left"] == 2, s["run"]
    assert s["jobs"]["pending"] == 2
    assert (s["exit_code"], s["complete"], s["left"], s["compiler_bugs"]) == (2, False, 2, 0)
    assert s["plan"] == {"jobs": 3, "finished": 1, "done": 1, "left": 2, "models": 3, "models_done": 1}
    assert not leftovers(out)
    with Store(out / "campaign.sqlite") as st:
        assert sorted(j["status"] for j in st.jobs()) == ["done"]  # the two never started have no row
        assert len(st.plan()) == 3
    from eqsat_test.runners.campaign.run import text_summary
    assert "planned: 3 jobs over 3 models; 1 finished, 2 left" in text_summary(s)
    from eqsat_test.runners.campaign.report import build_view, collect
    tiles = dict(build_view(collect(out), out / "report.html")["summary"])
    assert tiles["jobs finished"].startswith("1 / 3 planned") and "2 left" in tiles["jobs finished"]
    assert tiles["models"].startswith("1 / 3 planned")
    # a resume without the budget runs the other two only (both at once: one worker process each)
    r = campaign(spec, "--json", "--jobs", "2", "--total-seconds", "0")
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["run"]["ran"] == 2
    with Store(out / "campaign.sqlite") as st:
        assert len(st.finished_keys()) == 3
    assert not [p for p in (out / "runs" / ".tmp").iterdir()] if (out / "runs" / ".tmp").exists() else True


# ---------------------------------------------------------------------------------------------
# Devices: the cpu jobs of a cpu + cuda campaign are a cpu campaign's
# ---------------------------------------------------------------------------------------------

@pytest.mark.slow  # two jobs, one an Inductor run: ~40 s on 2 loaded cores
def test_cpu_jobs_of_a_cpu_and_cuda_campaign_find_what_a_cpu_campaign_finds(tmp_path):
    """devices = ["cuda", "cpu"]: the cpu job of a model with a CPU-only bug (Inductor's test-only C++ miscompile)
    runs, is recorded and reported as a cpu-only campaign's, beside its model's cuda job, whatever that one does.
    The campaign's GPU is CUDA_VISIBLE_DEVICES=99, one id no torch can open: the campaign plans a GPU slot, the cuda
    job ends at once as bad-input (on a GPU host too)."""
    kw = dict(models=[str(MODELS / "relu_chain.py")], rule_sets=[[str(RULES / "basic.py")]], backends=[INJECTED_BUG],
              variants=1, inputs="given", budget={"job_timeout": 600})
    both = write_spec(tmp_path / "both.toml", name="both", devices=["cuda", "cpu"], **kw)
    out = tmp_path / "out"
    r = warm_server().run(["campaign", both, "--json", "--jobs", "2", "--out", out], cli=True, cwd=tmp_path,
                          env={"CUDA_VISIBLE_DEVICES": "99"})
    assert r.returncode == 1, r.stderr[-3000:]  # candidates found
    s = json.loads(r.stdout)
    assert s["jobs"] == {"total": 2, "done": 1, "bad-input": 1}, s["jobs"]
    assert s["run"]["gpu_slots"] == [2] and s["run"]["peak_at_once"] == 2  # a cpu + cuda campaign, both at once
    with Store(out / "campaign.sqlite") as st:
        assert st.check() == []
        jobs = {j["device"]: j for j in st.jobs()}
        assert jobs["cuda"]["status"] == "bad-input" and jobs["cpu"]["status"] == "done", jobs
        assert jobs["cpu"]["compiler_bugs"] > 0 and jobs["cpu"]["executed"] > 0
        assert Path(jobs["cpu"]["run_dir"]).name.endswith(jobs["cpu"]["key"][:12])  # its own run folder
        assert {x["job_key"] for f in st.findings() for x in f["sightings"]} == {jobs["cpu"]["key"]}
    bugs = [f for f in s["findings"] if f["compiler_bug"]]
    assert bugs and {(f["backend"], f["device"]) for f in bugs} == {(INJECTED_BUG, "cpu")}
    assert s["clusters"] and {c["device"] for c in s["clusters"]} == {"cpu"}
    from eqsat_test.runners.campaign.run import text_summary
    assert "FOUND" in text_summary(s)
    # The same job as a cpu-only campaign's (its key, so its store row): that campaign has nothing left to run here.
    cpu = write_spec(tmp_path / "cpu.toml", name="both", devices=["cpu"], **kw)
    r = warm_server().run(["campaign", cpu, "--json", "--out", out], cli=True, cwd=tmp_path)
    assert r.returncode == 1, r.stderr[-3000:]
    s2 = json.loads(r.stdout)
    assert (s2["run"]["ran"], s2["run"]["skipped"], s2["jobs"]) == (0, 1, {"total": 1, "done": 1})
    assert {f["signature"] for f in s2["findings"]} == {f["signature"] for f in s["findings"]}


# ---------------------------------------------------------------------------------------------
# Jobs at once; a killed campaign takes its jobs' processes with it; the plan stays visible
# ---------------------------------------------------------------------------------------------

# Both define the names a convention looks for (so that the file is imported), but no model (bad input).
SLEEPY = '''"""Test model {i}: sleeps while being imported, then defines no model (the job ends as bad-input)."""
import time
time.sleep({secs})
X = {i}
Model = None
def get_inputs():
    return []
'''

# Spawns a process in a session of its own (as the job's pool workers are) and waits, while FLAG exists.
HANGS_WITH_A_WORKER = '''"""Test model: while {flag} exists, starts a detached child (like a pool worker) and hangs."""
import os, subprocess, sys, time
if os.path.exists({flag!r}):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # eqsat-test-fake-worker"],
                     start_new_session=True)
    time.sleep(120)
X = 1
Model = None
def get_inputs():
    return []
'''


def _overlap(intervals: list[tuple[float, float]]) -> int:
    """Most intervals open at one moment."""
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals], key=lambda e: (e[0], e[1]))
    n = best = 0
    for _, d in events:
        n += d
        best = max(best, n)
    return best


@pytest.mark.slow  # ~20 s idle, more on a loaded machine: 2N jobs, each a Python start and a 4 s import
def test_a_campaign_on_n_cores_runs_n_jobs_at_once(tmp_path):
    from eqsat_test.runners.campaign.run import cpu_cores
    cores = cpu_cores()
    n = min(cores, 4)
    models = []
    for i in range(2 * n):
        m = tmp_path / f"sleepy{i}.py"
        m.write_text(SLEEPY.format(i=i, secs=4))
        models.append(str(m))
    spec = write_spec(tmp_path / "par.toml", name="par", models=models, rule_sets=[[str(RULES)]], backends=["eager"],
                      variants=1, inputs="given", budget={"job_timeout": 300})  # (the library's compile is no part of it)
    r = campaign(spec, "--json", *(["--jobs", str(n)] if n < cores else []), timeout=600)  # default: one per core
    assert r.returncode == 0, r.stderr[-3000:]
    s = json.loads(r.stdout)
    assert s["jobs"] == {"total": 2 * n, "bad-input": 2 * n}, s["jobs"]
    assert s["run"]["jobs_at_once"] == n and s["run"]["peak_at_once"] == n
    assert s["run"]["jobs_per_run"] == max(1, cores // n) and s["run"]["gpu_util"] is None
    with Store(tmp_path / "par-out" / "campaign.sqlite") as st:
        spans = [(j["started"], j["finished"]) for j in st.jobs()]
        assert st.meta()["runs"][-1]["jobs_at_once"] == n
    assert _overlap(spans) == n, spans  # n at once, never more


@pytest.mark.slow  # three campaign processes and two jobs: ~30 s idle
def test_kill_9_takes_the_jobs_processes_along_and_dry_run_says_interrupted(tmp_path, capsys):
    from eqsat_test.runners.campaign.run import campaign_id_of
    flag = tmp_path / "hang.flag"
    flag.write_text("")
    model = tmp_path / "hangs.py"
    model.write_text(HANGS_WITH_A_WORKER.format(flag=str(flag)))
    spec = write_spec(tmp_path / "kill.toml", name="kill", models=[str(model)], backends=["eager"], variants=1,
                      inputs="given", budget={"job_timeout": 300})
    out = tmp_path / "kill-out"
    marker = f"EQSAT_CAMPAIGN={campaign_id_of(out)}"
    p = subprocess.Popen([sys.executable, "-m", "eqsat_test.runners.cli", "campaign", str(spec), "--json"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=repo_env(), cwd="/")

    def fake_workers() -> list[int]:
        found = []
        for pid in processes_with_env(marker):
            try:
                if b"eqsat-test-fake-worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                pass
        return found

    try:
        t0 = time.monotonic()
        while not fake_workers():
            assert p.poll() is None and time.monotonic() - t0 < 120, "the job's detached child never started"
            time.sleep(0.2)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        t1 = time.monotonic()
        while processes_with_env(marker) and time.monotonic() - t1 < 10:
            time.sleep(0.1)
        gone_after = time.monotonic() - t1
        assert not processes_with_env(marker), "the killed campaign's job processes are still running"
        assert gone_after < 5, f"job processes outlived the campaign by {gone_after:.1f} s"
    finally:
        kill_left = processes_with_env(marker)
        for pid in kill_left:
            os.kill(pid, signal.SIGKILL)
    rc, listed, err = campaign_here(capsys, spec, "--dry-run", "--json")
    assert rc == 0, err
    assert [j["status"] for j in json.loads(listed)["jobs"]] == ["interrupted"]
    rc, listed, err = campaign_here(capsys, out, "--dry-run", "--json")  # the folder form too
    assert [j["status"] for j in json.loads(listed)["jobs"]] == ["interrupted"]
    # Resume runs it again (this time it ends at once: bad input).
    flag.unlink()
    r = campaign(spec, "--json")
    s = json.loads(r.stdout)
    assert s["run"]["ran"] == 1 and s["jobs"] == {"total": 1, "bad-input": 1}, r.stderr[-2000:]
    assert s["plan"] == {"jobs": 1, "finished": 1, "done": 0, "left": 0, "models": 1, "models_done": 1}


def test_default_campaign_folder_is_the_spec_name_with_out(tmp_path):
    from eqsat_test.runners.campaign.run import resolve_out
    assert resolve_out(REPO / "examples" / "campaign.toml", None) == REPO / "examples" / "campaign-out"
    assert "eqsat-test report examples/campaign-out" in (REPO / "examples" / "campaign.toml").read_text()


def test_ray_task_function_ships_files_to_a_node_without_them(tmp_path):
    """What a Ray worker on another machine does (no shared file system), called here without Ray."""
    spec = write_spec(tmp_path / "r.toml", models=[str(MODELS / "relu_chain.py")], rule_sets=[[str(RULES)]],
                      backends=["eager"], variants=2, inputs="given", budget={"job_timeout": 600})
    job = make_jobs(load_spec(spec))[0]
    ghost = "/nonexistent/eqsat"
    model = Path(job["model"]).read_bytes()
    import hashlib
    payload = {"job": {**job, "model": f"{ghost}/relu_chain.py",
                       "rule_args": [f"{ghost}/rules"], "rule_files": [f"{ghost}/rules/{Path(f).name}" for f in job["rule_files"]]},
               "campaign_id": "test", "threads": 1,
               "model": {"path": f"{ghost}/relu_chain.py", "sha": hashlib.sha256(model).hexdigest(), "content": model},
               "rule_files": [{"path": f"{ghost}/rules/{Path(f).name}", "sha": hashlib.sha256(Path(f).read_bytes()).hexdigest(),
                               "content": Path(f).read_bytes()} for f in job["rule_files"]]}
    res = ray_job(payload)
    assert res["outcome"]["status"] == "done", res["outcome"].get("error")
    rep = res["outcome"]["report"]
    assert rep["variants"] == 2
    assert any(f["kind"] == "unsound-rewrite" for f in rep["findings"])
    assert res["outcome"]["rules"]["names"] and len(res["tar"]) > 1000
    assert not Path(res["made_in"]).exists()  # the node's temporary folder is cleaned up


def test_a_job_whose_model_outlasts_its_budget_while_loading_is_a_timeout_that_says_so(tmp_path):
    """The job's run gets --time-budget (its timeout less a variant timeout, at least half of it), counted from the
    start: a model whose forward sleeps 120 s ends inside loading at 45 s, reported, instead of being killed at 90."""
    spec = write_spec(tmp_path / "slow.toml", models=[str(REPO / "tests" / "models" / "slow_forward.py")],
                      backends=["eager"], variants=2, inputs="given", budget={"job_timeout": 90})
    r = campaign(spec, "--json", "--jobs", "1")
    s = json.loads(r.stdout)
    assert s["jobs"] == {"total": 1, "timeout": 1}, r.stderr[-2000:]
    with Store(tmp_path / "slow-out" / "campaign.sqlite") as st:
        (job,) = st.jobs()
    assert job["error"].startswith("the run's time budget ran out while loading the model file"), job["error"][:500]
    assert job["seconds"] < 90

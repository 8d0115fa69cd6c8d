"""A campaign says what it is doing at least every HEARTBEAT_S seconds; its exit code says which fact wins and --json carries both; the report's wall time counts the time jobs ran."""
from __future__ import annotations

import time

import pytest
from conftest import REPO

from eqsat_test.runners.campaign import progress as prog
from eqsat_test.runners.campaign.jobs import HEARTBEAT_S
from eqsat_test.runners.campaign.report import wall_time
from eqsat_test.runners.cli.campaign import exit_code
from eqsat_test.runners.records import ExitCode


def test_heartbeat_names_the_running_jobs_their_stage_and_elapsed(tmp_path, monkeypatch, capsys):
    assert HEARTBEAT_S <= 30
    run_dir = tmp_path / "job1"
    run_dir.mkdir()
    (run_dir / "job.log").write_text("noise\neqsat-test: graph g0: 7 ops: saturating (at most 10 s)\n"
                                     "eqsat-test: 12/66 tasks done (33 program tasks + 33 sweep tasks), 0 suspicious\n")
    p = prog.Progress(3, {"compiler_bugs": 0, "findings": 0}, plain=True)
    running = [({"model_rel": "models/mlp.py"}, time.time() - 42, run_dir),
               ({"model_rel": "conv.py"}, time.time() - 3, tmp_path / "not-started-yet")]
    p.heartbeat(running)
    assert capsys.readouterr().err == ""  # not yet: a line was printed at the start
    clock = [time.monotonic() + HEARTBEAT_S + 1]
    monkeypatch.setattr(prog.time, "monotonic", lambda: clock[0])
    p.heartbeat(running)
    line = capsys.readouterr().err.strip()
    assert line.startswith("eqsat-test: 0/3 jobs done, 2 running: mlp.py 12/66 tasks done (33 program tasks")
    assert "(42 s)" in line and "conv.py starting (3 s)" in line and "elapsed" in line
    p.heartbeat(running)
    assert capsys.readouterr().err == ""  # one line per HEARTBEAT_S


def test_job_stage_is_the_last_line_shortened(tmp_path):
    (tmp_path / "job.log").write_text("eqsat-test: " + "x" * 200 + "\n")
    assert prog.job_stage(tmp_path, width=20) == "x" * 17 + "..."
    assert prog.job_stage(tmp_path / "nothing") == "starting"


def test_exit_code_candidates_win_over_budget_spent():
    found_and_left = {"compiler_bugs": 2, "jobs": {"total": 5, "done": 3, "pending": 2}, "run": {"left": 2}}
    assert exit_code(found_and_left) == ExitCode.FOUND
    assert exit_code({"compiler_bugs": 0, "jobs": {"pending": 2}, "run": {"left": 2}}) == ExitCode.INTERRUPTED
    assert exit_code({"compiler_bugs": 0, "jobs": {"error": 1}, "run": {"left": 0}}) == ExitCode.INTERNAL
    assert exit_code({"compiler_bugs": 0, "jobs": {"done": 4}, "run": {"left": 0}}) == ExitCode.OK


def test_wall_time_counts_the_time_jobs_ran_not_the_gaps_between_runs():
    day = 86400.0
    jobs = [{"started": 0.0, "finished": 600.0}, {"started": 300.0, "finished": 900.0},  # first run: 15 min
            {"started": day, "finished": day + 300.0}]  # resumed the next day: 5 min
    text = wall_time(jobs)
    assert text.startswith("20.0 min with jobs running") and "from first start to last end" in text
    assert wall_time([{"started": 0.0, "finished": 60.0}]) == "1.0 min with jobs running"
    assert wall_time([{"started": None, "finished": None}]) == "-"


@pytest.mark.slow  # one `rules list` process (imports torch)
def test_a_resumed_campaign_does_not_ask_for_rules_in_the_cache_again(tmp_path, monkeypatch, capsys):
    from eqsat_test.runners.campaign import jobs as jobs_mod
    monkeypatch.setenv("EQSAT_TEST_CACHE", str(tmp_path / "cache"))
    rules = str(REPO / "tests" / "user_rules" / "my_rules.py")
    job = {"rule_args": [rules], "rule_set_version": "v1", "torch_version": "2.x"}
    jobs_mod.warm_rule_cache([job])
    assert "compiled into the cache" in capsys.readouterr().err
    assert jobs_mod.warm_stamp([rules], job).is_file()

    def no_process(*a, **kw):
        raise AssertionError("a process was started for a rule set in the cache")
    monkeypatch.setattr(jobs_mod.subprocess, "Popen", no_process)
    jobs_mod.warm_rule_cache([job])  # the resume
    assert "in the cache (compiled by an earlier run)" in capsys.readouterr().err
    changed = {**job, "rule_set_version": "v2"}  # a rule file changed: asked again
    with pytest.raises(AssertionError, match="a process was started"):
        jobs_mod.warm_rule_cache([changed])


def test_a_finished_job_line_counts_root_causes_first(capsys):
    p = prog.Progress(2, {"compiler_bugs": 0, "findings": 0, "root_causes": 0}, plain=True)
    job = {"model_rel": "m.py", "rule_label": "default", "backend": "inductor", "device": "cpu", "seed": 0}
    p.update(job, {"status": "done", "started": 0.0, "finished": 2.0, "report": {"findings": [{}] * 27}},
               {"compiler_bugs": 27, "findings": 30, "root_causes": 1})
    line = capsys.readouterr().err
    assert "distinct so far: root causes=1 (candidates 27) notes=3" in line

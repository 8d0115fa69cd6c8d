"""Confirm before claiming: how a finding's lone repro.py run decides confirmed / flaky / resource."""
from __future__ import annotations

import pytest

from eqsat_test.runners.findings.confirm import OtherLoad, loaded, outcome, unconfirmed_timeouts


def _r(rc=1, verdict="MISCOMPILE", timed_out=False, eager=0.01, seconds=3.0):
    return {"rc": rc, "verdict": verdict, "timed_out": timed_out, "eager_seconds": eager, "seconds": seconds,
            "output": ""}


def test_miscompile_confirmed_only_by_its_own_verdict():
    f = {"kind": "miscompile"}
    assert outcome(f, _r(), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=0, verdict="OK"), 60)[0] == "flaky"
    assert outcome(f, _r(rc=1, verdict="CRASH"), 60)[0] == "flaky"
    assert outcome(f, _r(rc=0, verdict="NONDETERMINISTIC"), 60)[0] == "flaky"


def test_crashes_confirmed_by_a_crash_verdict_or_a_signal_after_eager():
    f = {"kind": "compile-crash"}
    assert outcome(f, _r(verdict="CRASH"), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=-11, verdict=None), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=-11, verdict=None, eager=None), 60)[0] == "flaky"  # died before eager finished
    assert outcome(f, _r(rc=0, verdict="OK"), 60)[0] == "flaky"


def test_a_timeout_is_a_compiler_bug_only_when_compile_hangs_while_eager_is_fast():
    f = {"kind": "timeout"}
    assert outcome(f, _r(rc=None, verdict=None, timed_out=True, eager=0.5), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=None, verdict=None, timed_out=True, eager=30.0), 60)[0] == "resource"
    assert outcome(f, _r(rc=None, verdict=None, timed_out=True, eager=None), 60)[0] == "resource"
    assert outcome(f, _r(rc=0, verdict="OK", seconds=20.0), 60)[0] == "resource"


def test_a_timeout_re_run_on_a_loaded_machine_is_load_not_a_hang():
    """Alone means alone: a timeout that hangs again while other work keeps over half the cores busy (a
    campaign's other jobs) is a resource note, however fast eager ran; the same on an idle machine is claimed."""
    import os
    f = {"kind": "timeout"}
    cores = os.cpu_count() or 1
    busy = _r(rc=None, verdict=None, timed_out=True, eager=0.5)
    assert outcome(f, {**busy, "load": 0.0}, 60)[0] == "confirmed"
    kind, why = outcome(f, {**busy, "load": 0.9 * cores}, 60)
    assert kind == "resource" and "loaded" in why
    assert loaded(0.9 * cores) and not loaded(0.1 * cores)
    # load does not turn other verdicts: a miscompile reproduces or not whatever the load
    assert outcome({"kind": "miscompile"}, {**_r(), "load": 0.9 * cores}, 60)[0] == "confirmed"


def test_other_load_counts_busy_processes_that_are_not_ours_to_wait_for():
    """OtherLoad: the machine's busy CPU time, less our finished children's, per wall second."""
    import subprocess
    import sys
    import time
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        meter = OtherLoad()
        time.sleep(1.5)
        seen = meter.cores()
    finally:
        hog.kill()
        hog.wait()
    assert seen >= 0.3, seen  # (a shared machine may give the hog less than a whole core)


def test_timeouts_not_re_run_alone_are_resource_notes(tmp_path):
    """--no-confirm, or a time budget spent before confirming: a timeout is never claimed without a lone re-run."""
    import time

    from eqsat_test.runners.findings.confirm import confirm_all
    written = [{"id": "001-timeout-g0_v001", "kind": "timeout", "detail": "no result within 60 s (during compile)"},
               {"id": "002-miscompile-g0_v002", "kind": "miscompile"}]
    written, n = unconfirmed_timeouts(written)
    assert n == 1
    assert written[0]["kind"] == "resource" and written[0]["claimed_kind"] == "timeout"
    assert written[1]["kind"] == "miscompile"
    f = {"id": "003-timeout-g0_v003", "kind": "timeout"}
    (tmp_path / "findings" / f["id"]).mkdir(parents=True)
    [f], stats = confirm_all([f], tmp_path, timeout=60, deadline=time.monotonic() - 1)
    assert f["kind"] == "resource" and f["confirmed"] is False and stats["resource"] == 1


def test_no_confirmation_starts_after_the_deadline(tmp_path):
    """A run's --time-budget holds for confirming too: past it, a candidate stays unconfirmed (None), unrun."""
    import time

    from eqsat_test.runners.findings.confirm import confirm_all
    folder = tmp_path / "findings" / "001-miscompile-g0_v001"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\nraise SystemExit(1)\n")
    f = {"id": "001-miscompile-g0_v001", "kind": "miscompile"}
    [f], stats = confirm_all([f], tmp_path, timeout=60, deadline=time.monotonic() - 1)
    assert stats["skipped"] == 1 and stats["checked"] == 0 and f["confirmed"] is None
    assert not (tmp_path / "ran").exists()


@pytest.mark.slow  # real workers
def test_a_runs_time_budget_reaches_its_confirmation(tmp_path, monkeypatch):
    """execute_bundle hands its deadline (--time-budget) to confirm_all: a run slowed by load stops confirming
    at its budget and reports its verdicts (a campaign job's budget ends inside its timeout: jobs.job_budget)."""
    import time

    from conftest import TEST_MODELS

    import eqsat_test.runners.pipeline as P
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    generate(TEST_MODELS / "relu_mlp.py", tmp_path / "bundle",
             GenerateOptions(variants=1, rules=(str(TEST_MODELS / "e2e_rules"),)))
    seen = {}

    def confirm_all(written, out, *, timeout, jobs=1, deadline=None, log=None, **_):
        seen["deadline"] = deadline
        return written, {"checked": 0, "skipped": len(written)}
    monkeypatch.setattr(P, "confirm_all", confirm_all)
    opts = P.ExecOptions(backends=('inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"',), jobs=1, timeout=240,
                         minimize=False, collect_env=False, progress=False, time_budget=900, input_kinds=("given",))
    t0 = time.monotonic()
    report = P.execute_bundle(tmp_path / "bundle", tmp_path / "out", opts)
    assert report["stats"]["compiler_bugs"] >= 1
    assert seen["deadline"] is not None and abs(seen["deadline"] - (t0 + 900)) < 60


def test_a_sweep_timeout_is_re_run_as_its_own_task_alone(tmp_path, monkeypatch):
    """A sweep task's repro.py holds the model's own inputs, not the swept ones that hung: its timeout is re-run as
    the sweep task itself, on one fresh worker; finished alone, it was load (a resource note), never a bug."""
    import eqsat_test.runners.findings.confirm as C
    seen = {}

    def rerun(f, tasks, timeout, env=None):
        seen["task"] = tasks[0]["id"]
        return {"rc": 0, "seconds": 3.0, "timed_out": False, "eager_seconds": None, "verdict": None, "output": "",
                "load": 0.0}
    monkeypatch.setattr(C, "rerun_sweep_alone", rerun)
    monkeypatch.setattr(C, "run_repro", lambda *a, **k: (_ for _ in ()).throw(AssertionError("repro.py run")))
    f = {"id": "001-timeout-g0_seed", "kind": "timeout", "sweep": "sweeps(dtype=float16)", "variant": "g0_seed",
         "backend": "inductor", "device": "cpu"}
    (tmp_path / "findings" / f["id"]).mkdir(parents=True)
    tasks = [{"id": "g0_seed@inductor@cpu#sweep", "variant": "g0_seed", "backend": "inductor", "device": "cpu"}]
    [f], stats = C.confirm_all([f], tmp_path, timeout=150, tasks=tasks)
    assert seen["task"] == tasks[0]["id"]
    assert f["kind"] == "resource" and "finished" in f["confirmation"]["why"] and stats["resource"] == 1


def test_a_timeout_is_re_run_alone_with_several_times_its_limit(tmp_path, monkeypatch):
    """A big graph compiling slowly is no hang: the lone re-run gets HANG_FACTOR times the limit, and a compile that
    finishes within it is a resource note; one that runs past it while eager was fast is claimed. Where the time
    budget left is shorter than that, nothing is claimed."""
    import time

    import eqsat_test.runners.findings.confirm as C
    limits = []

    def repro(folder, timeout, threads=1, finish_in=None):
        limits.append(timeout)
        if finish_in is not None and finish_in < timeout:
            return {"rc": 0, "seconds": finish_in, "timed_out": False, "eager_seconds": 0.1, "verdict": "OK",
                    "output": "", "load": 0.0}
        return {"rc": None, "seconds": timeout, "timed_out": True, "eager_seconds": 0.1, "verdict": None,
                "output": "", "load": 0.0}

    def finding():
        f = {"id": "001-timeout-g0_v001", "kind": "timeout", "variant": "g0_v001", "backend": "inductor",
             "device": "cpu", "detail": "no result within 150 s (during compile)"}
        (tmp_path / "findings" / f["id"]).mkdir(parents=True, exist_ok=True)
        return f

    monkeypatch.setattr(C, "run_repro", lambda folder, timeout, threads=1: repro(folder, timeout, threads, 400.0))
    [f], stats = C.confirm_all([finding()], tmp_path, timeout=150)
    assert limits == [C.HANG_FACTOR * 150] and f["kind"] == "resource" and "finished in 400" in f["confirmation"]["why"]
    monkeypatch.setattr(C, "run_repro", lambda folder, timeout, threads=1: repro(folder, timeout, threads))
    [f], stats = C.confirm_all([finding()], tmp_path, timeout=150)
    assert f["kind"] == "timeout" and f["confirmed"] and str(int(C.HANG_FACTOR * 150)) in f["confirmation"]["why"]
    limits.clear()
    [f], stats = C.confirm_all([finding()], tmp_path, timeout=150, deadline=time.monotonic() + 300)
    assert limits == [] and f["kind"] == "resource" and "time budget left" in f["detail"] and stats["resource"] == 1

"""Confirm before claiming: how a finding's lone repro.py run decides confirmed / flaky / resource."""
from __future__ import annotations

import pytest

from eqsat_test.runners.findings.confirm import outcome


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


def test_no_confirmation_starts_after_the_deadline(tmp_path):
    """A run's --time-budget holds for confirming too: past it, a candidate stays unconfirmed (None), unrun."""
    import time
    from eqsat_test.runners.findings.confirm import confirm_all
    folder = tmp_path / "findings" / "001-miscompile-g0_v001"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\nraise SystemExit(1)\n")
    f = {"id": "001-miscompile-g0_v001", "kind": "miscompile"}
    stats = confirm_all([f], tmp_path, timeout=60, deadline=time.monotonic() - 1)
    assert stats["skipped"] == 1 and stats["checked"] == 0 and f["confirmed"] is None
    assert not (tmp_path / "ran").exists()


@pytest.mark.slow  # real workers
def test_a_runs_time_budget_reaches_its_confirmation(tmp_path, monkeypatch):
    """execute_bundle hands its deadline (--time-budget) to confirm_all: a run slowed by load stops confirming
    at its budget and reports its verdicts (a campaign job's budget ends inside its timeout: jobs.job_budget)."""
    import time
    import eqsat_test.runners.pipeline as P
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from conftest import TEST_MODELS
    generate(TEST_MODELS / "relu_mlp.py", tmp_path / "bundle",
             GenerateOptions(variants=1, rules=(str(TEST_MODELS / "e2e_rules"),)))
    seen = {}

    def confirm_all(written, out, *, timeout, jobs=1, deadline=None, log=None):
        seen["deadline"] = deadline
        return {"checked": 0, "skipped": len(written)}
    monkeypatch.setattr(P, "confirm_all", confirm_all)
    opts = P.ExecOptions(backends=('inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"',), jobs=1, timeout=240,
                         minimize=False, collect_env=False, progress=False, time_budget=900, input_kinds=("given",))
    t0 = time.monotonic()
    report = P.execute_bundle(tmp_path / "bundle", tmp_path / "out", opts)
    assert report["stats"]["compiler_bugs"] >= 1
    assert seen["deadline"] is not None and abs(seen["deadline"] - (t0 + 900)) < 60

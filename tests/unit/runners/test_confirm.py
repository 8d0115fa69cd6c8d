"""Confirm before claiming: how a finding's lone repro.py run decides confirmed / flaky / resource."""
from __future__ import annotations

from runners.findings.confirm import outcome


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

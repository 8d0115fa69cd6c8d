"""Verdicts survive a kill: every finished verdict is in OUT/verdicts.jsonl at once; --time-budget ends a run with a report."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

from conftest import TEST_MODELS, eqsat_command, repo_env

CHEAP = ["-n", "4", "--jobs", "1", "--no-sweep", "--no-artifacts", "--no-minimize", "--inputs", "given",
         "-r", str(TEST_MODELS / "e2e_rules")]


def test_sigkill_after_the_first_verdicts_keeps_them(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen([*eqsat_command(), str(TEST_MODELS / "relu_mlp.py"), *CHEAP, "--out", str(out)],
                         env=repo_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    stream = out / "verdicts.jsonl"
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            if stream.is_file() and stream.read_text().count('"type": "result"') >= 1:
                break
            assert p.poll() is None, "the run ended before it was killed"
            time.sleep(0.2)
        else:
            raise AssertionError("no verdict within 600 s")
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    rows = [json.loads(line) for line in stream.read_text().splitlines()]
    results = [r for r in rows if r["type"] == "result"]
    assert results and all(r["status"] and r["task"] for r in results)
    assert all(s["kind"] for r in results for s in r["input_sets"] if r["status"] == "ok")


def test_time_budget_ends_the_run_with_a_report(eqsat, tmp_path):
    """The budget of `exec` counts from its start: tasks not started are counted, what ran is reported. (`run`'s
    counts from the run's start, generation included: tests/e2e/test_interrupts.py.)"""
    res = eqsat("generate", TEST_MODELS / "relu_mlp.py", *CHEAP[:2], "-r", CHEAP[-1], "--out", tmp_path / "bundle")
    assert res.rc == 0, res.stderr[-3000:]
    out = tmp_path / "out"
    res = eqsat("exec", tmp_path / "bundle", *CHEAP[2:-2], "--time-budget", "1", "--json", "--out", out)
    assert res.rc == 0, res.stderr[-3000:]
    stats = res.json["stats"]
    assert stats["time_budget"] == 1.0
    assert stats["tasks_not_started"] > 0
    assert res.json["executed"] == stats["tasks"] - stats["tasks_not_started"]
    saved = json.loads((out / "results.json").read_text())["report"]["stats"]
    assert saved["tasks_not_started"] == stats["tasks_not_started"]

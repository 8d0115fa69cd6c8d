"""What a run leaves behind when it ends early: SIGINT writes results.json from what finished, marked partial, and says so; --time-budget covers loading and capturing the model."""
from __future__ import annotations

import json
import os
import runpy
import signal
import subprocess
import time

import pytest
from conftest import TEST_MODELS, eqsat_command, repo_env

pytestmark = pytest.mark.slow  # real runs of the command line


def _sigint_default():
    """In the child before it starts: Ctrl-C's default disposition, as in a terminal. A process started in the
    background by a non-interactive shell (`cmd &`) inherits SIGINT ignored, and Python then keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_writes_partial_results_and_says_where(tmp_path):
    out = tmp_path / "out"
    # one worker, one variant per compile, Inductor's caches off (warm caches from earlier tests would finish all nine
    # tasks within a second): tasks end one by one, so the interrupt comes between two of them
    p = subprocess.Popen([*eqsat_command(), str(TEST_MODELS / "relu_mlp.py"), "-n", "8", "--jobs", "1", "--batch", "1",
                          "--no-sweep", "--no-artifacts", "--inputs", "given", "--out", str(out)],
                         env={**repo_env(), "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, preexec_fn=_sigint_default)
    stream = out / "verdicts.jsonl"
    deadline = time.monotonic() + 600
    while not (stream.is_file() and '"type": "result"' in stream.read_text()):
        assert p.poll() is None, "the run ended before it was interrupted"
        assert time.monotonic() < deadline, "no verdict within 600 s"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the foreground process group
    try:
        stdout, stderr = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 2, stderr[-3000:]
    line = [ln for ln in stderr.splitlines() if ln.startswith("eqsat-test: interrupted")][-1]
    assert str(out / "results.json") in line and "marked partial" in line and str(stream) in line, line
    saved = json.loads((out / "results.json").read_text())
    report = saved["report"]
    assert report["partial"] is True and report["stats"]["interrupted"]["stage"]
    finished = [json.loads(x) for x in stream.read_text().splitlines() if '"type": "result"' in x]
    assert len(saved["raw"]) >= 1 and {r["task"] for r in saved["raw"]} <= {r["task"] for r in finished}
    assert report["executed"] == len([r for r in saved["raw"] if not r["task"].endswith("#sweep")])
    if report["executed"] < 9:  # interrupted while executing: the count says what was left
        assert f"of {report['stats']['tasks']} tasks had finished" in line


def test_time_budget_covers_loading_and_capture(tmp_path):
    """A model whose forward sleeps 120 s: with --time-budget 10 the run stops while loading it (the loader runs the
    forward eagerly) and says that nothing was tested, instead of running past the budget silently."""
    seconds = runpy.run_path(str(TEST_MODELS / "slow_forward.py"))["SECONDS"]  # one forward's sleep
    out = tmp_path / "out"
    budget = 10
    t0 = time.monotonic()
    p = subprocess.run([*eqsat_command(), str(TEST_MODELS / "slow_forward.py"), "--time-budget", str(budget), "--json",
                        "--out", str(out)], env=repo_env(), capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - t0
    assert p.returncode == 2, p.stderr[-3000:]
    # one forward alone outlasts this (and loading and capturing run it several times): the run stopped inside it.
    # Its end after the budget is the interpreter's start, imports and exit (seconds idle; more on a loaded machine)
    assert wall < seconds, (wall, p.stderr[-3000:])
    assert f"time budget of {budget} s spent while loading the model file" in p.stderr
    report = json.loads(p.stdout)
    assert report["partial"] is True and report["executed"] == 0
    assert report["stats"]["budget_spent_while"].startswith("loading the model file")
    assert json.loads((out / "results.json").read_text())["report"] == report
    assert not (out / "bundle").exists()

"""Worker pool start-up (runners/exec/pool.py): workers prestarted and warmed while `run` generates."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import eqsat_test.runners.exec.pool as execute
from eqsat_test.runners.exec.pool import PoolOptions, prestart, run_tasks, worker
from eqsat_test.runners.records import Result, ResultStatus, Task, TaskKind


def _warmup(tid: str) -> Task:
    return Task(id=tid, kind=TaskKind.WARMUP, device="cpu")


@pytest.fixture(autouse=True)
def no_workers_of_other_tests():
    """The pool is per process: workers another test of this process handed back or prestarted are not ours, and
    what runs at exit (_kill_spares: no worker handed back after it) is undone for the next test."""
    def clean():
        execute._kill_spares()
        execute._closing.clear()
    clean()
    yield
    clean()


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_prestarted_worker_is_taken_warm_and_unclaimed_spares_are_killed(tmp_path):
    opts = PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": str(tmp_path)})
    prestart(opts)
    w = worker(0, opts)  # waits for the spare's warm-up
    assert w.proc is not None and w.proc.poll() is None
    assert w.warm and w.warm.status == ResultStatus.OK and w.warm.device == "cpu" and w.warm.timings["warmup"] > 0
    w.kill()

    other = worker(0, PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": "elsewhere"}))
    assert other.proc is None and other.warm is None  # no spare with that environment: a fresh one

    prestart(opts)
    spare, thread = execute._spares[-1]
    thread.join()
    assert spare.proc.poll() is None
    proc = spare.proc
    execute._kill_spares()  # what runs at exit
    assert proc.poll() is not None and not execute._spares


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_the_first_spare_starts_alone_and_the_others_once_it_is_warm(tmp_path):
    """The first task (the seed's: the first verdict) waits least: the first worker shares the cores with nothing of
    the pool's until its warm-up compile is done."""
    import time
    opts = PoolOptions(jobs=2, env={"EQSAT_POOL_TEST": str(tmp_path)})
    t0 = time.monotonic()
    prestart(opts)
    first, second = worker(0, opts), worker(1, opts)
    try:
        assert first.warm.status == ResultStatus.OK and second.warm.status == ResultStatus.OK
        assert second.started_at >= t0 + first.warm.timings["warmup"], (t0, first.started_at, first.warm,
                                                                         second.started_at)
    finally:
        first.kill()
        second.kill()


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_run_tasks_uses_the_spare_and_still_runs_every_task(tmp_path):
    opts = PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": str(tmp_path)})
    prestart(opts)
    results = run_tasks([_warmup(f"t{i}") for i in range(2)], opts)
    assert [r.status for r in results] == ["ok", "ok"]
    assert not execute._spares  # taken, then handed back warm for the next stage
    assert execute.idle_workers() == 1
    execute.retire()
    assert execute.idle_workers() == 0


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_the_next_stage_takes_the_same_warm_worker_and_retire_ends_it(tmp_path):
    """A stage hands its live workers back; the next stage with the same environment runs in the same process (no
    import, no warm-up again); one with another environment does not; retire ends the ones no stage took."""
    opts = PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": str(tmp_path)})
    run_tasks([_warmup("t0")], opts)
    assert execute.idle_workers() == 1
    pid = execute._idle[0].proc.pid
    w = worker(0, opts)
    assert w.proc is not None and w.proc.pid == pid and execute.idle_workers() == 0
    execute.release(w)
    other = worker(0, PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": "elsewhere"}))
    assert other.proc is None and execute.idle_workers() == 1
    proc = execute._idle[0].proc
    execute.retire()
    assert proc.poll() is not None and execute.idle_workers() == 0
    dead = worker(0, opts)
    execute.release(dead)  # never started: nothing to hand on
    assert execute.idle_workers() == 0


def test_a_worker_ends_when_the_process_it_serves_is_killed(tmp_path):
    """A worker runs in a session of its own (no signal of its parent's reaches it) and reads its
    stdin only between tasks: killed with SIGKILL, a run's parent left its workers spinning on a long
    task (5 GB each). The worker watches the pid it serves and ends within seconds of it."""
    import json
    import signal
    import subprocess
    import sys
    import time

    from eqsat_test.runners.protocol import PARENT_ENV
    slow = tmp_path / "slow.py"  # a task that takes minutes: its module sleeps while it loads
    slow.write_text("import time\ntime.sleep(300)\n")
    task = json.dumps({"id": "t", "variant": "v", "file": str(slow), "backend": "eager"})
    code = ("import os, subprocess, sys, time\n"
            f"env = dict(os.environ, {PARENT_ENV}=str(os.getpid()))\n"
            "p = subprocess.Popen([sys.executable, '-m', 'eqsat_test.runners.worker'], stdin=subprocess.PIPE, text=True,\n"
            "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)\n"
            f"p.stdin.write({task!r} + '\\n'); p.stdin.flush()\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=str(Path(__file__).resolve().parents[3]))
    pid = int(parent.stdout.readline())
    time.sleep(8)  # the worker's imports, then the task
    parent.send_signal(signal.SIGKILL)
    parent.wait()

    def alive() -> bool:
        try:
            return not Path(f"/proc/{pid}/status").read_text().split("State:")[1].strip().startswith("Z")
        except (OSError, IndexError):
            return False
    deadline = time.monotonic() + 60
    while alive() and time.monotonic() < deadline:
        time.sleep(0.5)
    if alive():
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the worker outlived the process it serves by 60 s")


@pytest.mark.slow  # worker processes
def test_more_adds_tasks_as_results_come_and_every_worker_waits_for_them(tmp_path):
    """Guided extraction's feed (pipeline._guided_feed): a result may bring further tasks, queued after the
    others; a worker with nothing queued waits while another runs, since its result may bring more."""
    opts = PoolOptions(jobs=2, env={"EQSAT_POOL_TEST": str(tmp_path)})
    added = []

    def more(r: Result) -> list[Task]:
        if "warmup" in r.timings and r.device == "cpu" and len(added) < 3:
            added.append(len(added))
            return [_warmup(f"more{len(added)}")]
        return []

    results = run_tasks([_warmup("t0")], opts, more=more)
    assert len(results) == 4 and added == [0, 1, 2]
    assert all(r.status == ResultStatus.OK for r in results)

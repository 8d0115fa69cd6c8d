"""Worker pool start-up (runners/exec/pool.py): workers prestarted and warmed while `run` generates."""
from __future__ import annotations

import pytest

import runners.exec.pool as execute
from runners.exec.pool import PoolOptions, prestart, run_tasks, worker


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_prestarted_worker_is_taken_warm_and_unclaimed_spares_are_killed(tmp_path):
    opts = PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": str(tmp_path)})
    prestart(opts)
    w = worker(0, opts)  # waits for the spare's warm-up
    assert w.proc is not None and w.proc.poll() is None
    assert w.warm and w.warm["status"] == "ok" and w.warm["warmup"] == "cpu"
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
def test_run_tasks_uses_the_spare_and_still_runs_every_task(tmp_path):
    opts = PoolOptions(jobs=1, env={"EQSAT_POOL_TEST": str(tmp_path)})
    prestart(opts)
    results = run_tasks([{"kind": "warmup", "device": "cpu", "id": f"t{i}"} for i in range(2)], opts)
    assert [r["status"] for r in results] == ["ok", "ok"]
    assert not execute._spares  # taken, then killed with the pool

"""A pool of warm worker subprocesses with per-task timeouts; a hang or crash costs one task only.

Workers outlive the stage that started them: a stage hands its live workers back (`release`), and the next
stage with the same environment takes them warm (`worker`): execution, then the findings' confirmations and
minimization checks run in the same processes, torch imported and Inductor warmed once. `retire` ends those
no stage took (the end of a run), and the proofs' servers (runners/exec/prover.py), except inside `keep_warm`
(several runs in one process: the next run takes them); whatever is left dies at exit."""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from eqsat_test.runners import REPO_ROOT
from eqsat_test.runners.exec import prover
from eqsat_test.runners.protocol import PARENT_ENV, RESULT_TAG, cpu_cores, past, task_line
from eqsat_test.runners.records import Result, ResultStatus, Task, TaskKind

STARTUP_TIMEOUT = 180.0


@dataclass
class PoolOptions:
    jobs: int = 1
    timeout: float = 300.0  # seconds per task (compile included)
    env: dict = field(default_factory=dict)  # extra environment for every worker
    per_worker_cache: str | None = None  # folder: each worker gets its own Inductor/Triton cache
    compile_threads: int | None = None
    deadline: float | None = None  # time.monotonic() after which no new task starts (--time-budget)

    def out_of_time(self) -> bool:
        return past(self.deadline)


class Worker:
    def __init__(self, slot: int, opts: PoolOptions, log: Callable[[str], None]) -> None:
        self.slot, self.opts, self.log = slot, opts, log
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self.stderr_tail: list[str] = []
        self.warm: Result | None = None  # the warm-up's result, for a prestarted worker
        self.started_at: float | None = None  # time.monotonic() when its process started
        self.readers: list[threading.Thread] = []

    def _env(self) -> dict:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[PARENT_ENV] = str(os.getpid())  # the worker ends when this process is gone (protocol.exit_with_parent)
        threads = self.opts.compile_threads or (1 if self.opts.jobs > 1 else None)
        if threads:
            env["TORCHINDUCTOR_COMPILE_THREADS"] = str(threads)
            env.setdefault("OMP_NUM_THREADS", str(max(1, cpu_cores() // max(1, self.opts.jobs))))
        if self.opts.per_worker_cache:
            base = Path(self.opts.per_worker_cache) / f"worker{self.slot}"
            env["TORCHINDUCTOR_CACHE_DIR"] = str(base / "inductor")
            env["TRITON_CACHE_DIR"] = str(base / "triton")
        env.update({k: str(v) for k, v in self.opts.env.items()})
        return env

    def start(self) -> None:
        self.lines = queue.Queue()
        self.stderr_tail = []
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "eqsat_test.runners.worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=self._env(), start_new_session=True, bufsize=1,
        )
        self.readers = [threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True),
                        threading.Thread(target=self._read_err, args=(self.proc,), daemon=True)]
        for th in self.readers:
            th.start()
        msg = self._next(STARTUP_TIMEOUT)
        if msg is None or not msg.get("ready"):
            tail = "".join(self.stderr_tail[-20:])
            self.kill()
            raise RuntimeError(f"worker {self.slot} failed to start: {tail[-2000:]}")

    @staticmethod
    def _read(proc: subprocess.Popen, q: queue.Queue) -> None:
        try:
            for line in proc.stdout:  # type: ignore[union-attr]
                if line.startswith(RESULT_TAG):
                    q.put(json.loads(line[len(RESULT_TAG):]))
        except (OSError, ValueError):  # the pipe closed under us (the worker was killed at exit)
            pass
        q.put(None)  # EOF: the worker died

    def _read_err(self, proc: subprocess.Popen) -> None:
        try:
            for line in proc.stderr:  # type: ignore[union-attr]
                self.stderr_tail.append(line)
                if len(self.stderr_tail) > 200:
                    del self.stderr_tail[:100]
        except (OSError, ValueError):
            pass

    def _next(self, timeout: float):
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout"

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
            self.proc.wait()
        self.proc = None

    def run(self, task: Task) -> Result:
        """A task's result (a batch's with its variants' results inside), read from the worker's message, with the
        seconds it took (`elapsed`); for a worker that hung or died, the pool's Result saying so."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        t0 = time.perf_counter()
        self.proc.stdin.write(task_line(task))  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        deadline = time.perf_counter() + float(task.timeout_s or self.opts.timeout)  # batches: longer
        phase = None
        while True:
            msg = self._next(max(0.0, deadline - time.perf_counter()))
            if isinstance(msg, dict) and "phase" in msg:
                phase = msg["phase"]
                continue
            break
        if msg == "timeout":
            self.kill()
            return self._failed(task, ResultStatus.TIMEOUT if phase != "eager" else ResultStatus.EAGER_ERROR, phase,
                                {"type": "Timeout", "message":
                                 f"no result within {self.opts.timeout:.0f} s (during {phase})", "traceback": ""},
                                time.perf_counter() - t0)
        if msg is None:
            code = self.proc.wait() if self.proc else None
            tail = "".join(self.stderr_tail[-40:])
            self.proc = None
            sig = -code if code is not None and code < 0 else None
            why = f"worker died with signal {sig}" if sig else f"worker exited with code {code}"
            # A death before compiling started is the program's own (e.g. SIGFPE from integer
            # division in eager mode), not the compiler's.
            status = ResultStatus.EAGER_ERROR if phase == "eager" else ResultStatus.PROCESS_CRASH
            return self._failed(task, status, phase, {"type": "ProcessCrash", "message":
                                f"{why} during {phase or 'startup'}", "traceback": tail[-6000:]},
                                time.perf_counter() - t0)
        elapsed = time.perf_counter() - t0
        r = Result.from_dict(msg).with_(elapsed=elapsed)  # the one decoding: a record from here on
        if r.cuda_context_lost or (r.device == "cuda" and r.status not in (ResultStatus.OK, ResultStatus.EAGER_ERROR)):
            self.kill()  # a device-side assert poisons the CUDA context: next task, fresh process (a batch's too)
        return r

    @staticmethod
    def _failed(task: Task, status: ResultStatus, phase: str | None, error: dict, elapsed: float) -> Result:
        """The result of a task whose worker hung or died: no result came from it."""
        return Result(task=task.id, variant=task.variant, backend=task.backend,
                      device=task.device, status=status, error=error, phase=phase, elapsed=elapsed)


_spares: list[tuple[Worker, threading.Thread]] = []
_spares_lock = threading.Lock()
_idle: list[Worker] = []  # live workers a stage handed back (`release`), for the next one to take
_kept = [0]  # keep_warm blocks open: retire leaves the idle workers to the next run
_closing = threading.Event()  # set at exit: spares still starting die quietly


def prestart(opts: PoolOptions, device: str = "cpu", log: Callable[[str], None] = lambda s: None,
             backend: str = "inductor") -> None:
    """Start `opts.jobs` workers now, each warmed by one tiny compile on `device` with `backend`, for the next
    `run_tasks`/`run_batched` with the same options to take (`worker`). `eqsat-test run` calls
    it once the model file has loaded, so worker start-up (import torch, Inductor's
    first-compile costs) overlaps generation instead of following it. The first worker starts
    alone and the others once it is warm: it shares the cores with generation only, so the first
    task (the seed's: the first verdict) waits least, and the others' warm-up compile finds its
    kernel in the cache. Spares nobody takes are killed at exit."""
    _closing.clear()
    first_warm = threading.Event()
    env = Worker(0, opts, log)._env()
    with _spares_lock:  # workers an earlier run handed on (keep_warm) count: only the missing ones start
        have = sum(1 for w in _idle if w._env() == env) + sum(1 for w, _ in _spares if w._env() == env)
    if have:
        first_warm.set()
    for k in range(have, max(1, opts.jobs)):
        w = Worker(k, opts, log)

        def go(w=w, k=k) -> None:
            if k:
                first_warm.wait(STARTUP_TIMEOUT)
            try:
                if _closing.is_set():
                    return
                w.start()
                w.warm = w.run(Task(id="warmup", kind=TaskKind.WARMUP, device=device, backend=backend))
            except Exception as e:  # noqa: BLE001 - the taker starts a fresh one
                if not _closing.is_set():
                    log(f"spare worker {w.slot}: {e}")
                w.kill()
            finally:
                if not k:
                    first_warm.set()
        th = threading.Thread(target=go, daemon=True)
        th.start()
        with _spares_lock:
            _spares.append((w, th))


def worker(slot: int, opts: PoolOptions, log: Callable[[str], None] = lambda s: None) -> Worker:
    """A worker with the same environment that an earlier stage handed back (`release`), else a prestarted
    one (waiting for its warm-up), else a new one that starts on its first task."""
    want = Worker(slot, opts, log)
    with _spares_lock:
        k = next((k for k, w in enumerate(_idle) if w._env() == want._env()), None)
        if k is not None:
            w = _idle.pop(k)
            w.slot, w.opts, w.log = slot, opts, log
            return w
        i = next((i for i, (w, _) in enumerate(_spares) if w._env() == want._env()), None)
        if i is None:
            return want
        w, th = _spares.pop(i)
    th.join()
    w.slot, w.opts, w.log = slot, opts, log
    return w


def release(w: Worker) -> None:
    """Hand a worker back once a stage is done with it: alive, it waits warm for the next stage's `worker`
    (its process blocked on its stdin, no CPU); dead or at exit, it is dropped."""
    with _spares_lock:
        if w.proc is not None and w.proc.poll() is None and not _closing.is_set():
            _idle.append(w)
            return
    w.kill()


def retire(force: bool = False) -> None:
    """End the workers handed back that no stage took (a run's end); inside keep_warm, unless `force`, they wait
    for the next run."""
    with _spares_lock:
        if _kept[0] and not force:
            return
        idle = list(_idle)
        _idle.clear()
    prover.retire()
    for w in idle:
        w.kill()
        for r in w.readers:
            r.join(timeout=5)


@contextlib.contextmanager
def keep_warm():
    """Several runs in this process (`eqsat-test run A.py B.py`): the workers one run hands on wait for the next
    (retire leaves them); at the end, those left are ended."""
    with _spares_lock:
        _kept[0] += 1
    try:
        yield
    finally:
        with _spares_lock:
            _kept[0] -= 1
        retire()


def idle_workers() -> int:
    """How many workers wait warm for the next stage."""
    with _spares_lock:
        return len(_idle)


def _kill_spares() -> None:
    _closing.set()
    retire(force=True)
    with _spares_lock:
        spares = list(_spares)
        _spares.clear()
    # Reader threads end once their pipes close; joined here, they cannot print while the
    # interpreter shuts down (a bad-input run must print one line).
    for w, th in spares:
        w.kill()
        th.join(timeout=5)  # a spare still starting fails at once when killed ...
        w.kill()  # ... unless it started its process just after
        for r in w.readers:
            r.join(timeout=5)


atexit.register(_kill_spares)


def run_tasks(tasks: list[Task], opts: PoolOptions, on_result: Callable[[Result], None] | None = None,
              log: Callable[[str], None] = lambda s: None,
              more: Callable[[Result], list[Task]] | None = None) -> list[Result]:
    """Run every task on `opts.jobs` warm workers; results come back in task order. `more(result)`, called
    with each result, may return further tasks (run after those queued; a worker with nothing queued waits
    while others run, since their results may bring more)."""
    todo: queue.Queue = queue.Queue()
    for i, t in enumerate(tasks):
        todo.put((i, t))
    results: list[Result | None] = [None] * len(tasks)
    lock = threading.Lock()
    errors: list[BaseException] = []
    busy = [0]  # tasks being run

    def take():
        while True:
            with lock:  # (tasks are queued under the lock too: an empty queue with nothing running is final)
                try:
                    item = todo.get_nowait()
                    busy[0] += 1
                    return item
                except queue.Empty:
                    if more is None or busy[0] == 0:
                        return None
            time.sleep(0.05)  # another worker's result may queue more

    def extra(r: Result) -> list[Task]:
        try:
            return list(more(r)) if more is not None else []
        except Exception as e:  # noqa: BLE001 - a failing source of tasks ends the feed, not the run
            log(f"no further tasks: {type(e).__name__}: {e}")
            return []

    def slot(k: int) -> None:
        w = worker(k, opts, log)
        try:
            while True:
                if opts.out_of_time():
                    return
                item = take()
                if item is None:
                    return
                i, t = item
                try:
                    r = w.run(t)
                except BaseException as e:  # a worker that cannot start: stop this slot
                    errors.append(e)
                    with lock:
                        busy[0] -= 1
                    return
                with lock:
                    results[i] = r
                    if on_result:
                        on_result(r)
                    for t2 in extra(r):
                        results.append(None)
                        todo.put((len(results) - 1, t2))
                    busy[0] -= 1
        finally:
            release(w)

    return run_slots(slot, max(1, opts.jobs if more is not None else min(opts.jobs, len(tasks))), results, errors)


def run_slots(slot: Callable[[int], None], n: int, results: list, errors: list[BaseException]) -> list:
    """Run `slot(0)` .. `slot(n - 1)` (one per worker) in threads and wait for all; then the
    results that came back, or the first worker error if a result is missing."""
    threads = [threading.Thread(target=slot, args=(k,), daemon=True) for k in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors and any(r is None for r in results):
        raise RuntimeError(str(errors[0]))
    return [r for r in results if r is not None]

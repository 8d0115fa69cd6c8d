"""Fresh processes for the proofs: an interpreter that imports torch once and forks a child for each repro.py, which runs it as `python repro.py` would.

The child is a process of its own (its pid, process group, working folder, stdout and stderr) that has never
compiled or run anything: its parent only imported torch, Dynamo and Inductor (the 3-5 CPU-seconds each fresh
interpreter pays first) and nothing of eqsat-test is left imported in it, so the repro imports what it imports
as in a new interpreter. It shares no state with the warm workers: a finding that reproduces only in a process
that has compiled other programs does not reproduce here. Forking is safe: after these imports the server has
one Python thread and nothing has run on torch yet (tests/warm.py forks the same way).

Server side: `python -m eqsat_test.runners.exec.prover`, one JSON request a line on stdin ({"folder", "timeout"}),
one reply each on stdout (RESULT_TAG, {"rc", "output", "seconds", "timed_out"}). Pool side: `Prover` (`take`,
`give_back`, `retire`): started ahead of its first use (`prestart`, at a run's first suspicious result) or on it,
kept for the next proof of the run (and of the next run in the process, runners/exec/pool.py's keep_warm), ended
at the run's end.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from eqsat_test.runners import REPO_ROOT
from eqsat_test.runners.protocol import PARENT_ENV, RESULT_TAG, exit_with_parent

STARTUP_TIMEOUT = 180.0
OUTPUT_MAX_CHARS = 8000
PROJECT = "eqsat_test"


# ----------------------------------------------------------------------------------------------
# server side


def _child(folder: Path, out_fd: int) -> int:
    """In the forked child: become `python repro.py` in `folder`; its exit status."""
    import runpy
    os.setsid()  # its own process group: a timeout kills the repro with everything it started
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - the child's own streams, for its life
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    for name in [m for m in sys.modules if m.split(".")[0] == PROJECT]:  # as a new interpreter: none of ours
        del sys.modules[name]
    os.chdir(folder)
    sys.argv = ["repro.py"]
    sys.path[0] = str(folder)  # as the interpreter sets it for a script
    return exit_status(lambda: runpy.run_path("repro.py", run_name="__main__"))


def exit_status(run: Callable[[], object]) -> int:
    """Run a program's main as the interpreter would run it as a script: its exit status (SystemExit mapped as the
    interpreter maps it; an uncaught exception: its traceback on stderr, status 1)."""
    import traceback
    try:
        run()
        return 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1


def _prove(req: dict) -> dict:
    """Fork a child for req["folder"]'s repro.py, wait for it at most req["timeout"] seconds: its reply."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(Path(req["folder"]), out.fileno())
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code & 0xFF)
        deadline = time.monotonic() + float(req["timeout"])
        status, timed_out = None, False
        while status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
            elif time.monotonic() > deadline:
                timed_out = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                status = os.waitpid(pid, 0)[1]
            else:
                time.sleep(0.02)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return {"rc": None if timed_out else os.waitstatus_to_exitcode(status), "output": text[-OUTPUT_MAX_CHARS:],
            "seconds": round(time.perf_counter() - t0, 3), "timed_out": timed_out}


def serve() -> None:
    import torch  # noqa: F401  (the imports this server exists to pay once)
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints go to stderr: stdout is the reply channel
    print(RESULT_TAG + json.dumps({"ready": os.getpid()}), file=reply, flush=True)
    exit_with_parent()  # (a child copies only the thread that forks; this one only sleeps)
    for line in sys.stdin:
        if line.strip():
            print(RESULT_TAG + json.dumps(_prove(json.loads(line))), file=reply, flush=True)


# ----------------------------------------------------------------------------------------------
# pool side


class Prover:
    """One prover server; `run` proves one repro.py at a time."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env["OMP_NUM_THREADS"] = str(threads)  # as a fresh `python repro.py` of the run is given
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        env[PARENT_ENV] = str(os.getpid())
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.proc = subprocess.Popen([sys.executable, "-m", "eqsat_test.runners.exec.prover"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                     start_new_session=True, bufsize=1)
        if self._reply(STARTUP_TIMEOUT) is None:
            self.kill()
            raise RuntimeError("the prover did not start")

    def _reply(self, timeout: float) -> dict | None:
        got: list = []

        def read() -> None:
            for line in self.proc.stdout:  # type: ignore[union-attr]
                if line.startswith(RESULT_TAG):
                    got.append(json.loads(line[len(RESULT_TAG):]))
                    return
        th = threading.Thread(target=read, daemon=True)
        th.start()
        th.join(timeout)
        return got[0] if got else None

    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, folder: Path, timeout: float) -> dict | None:
        """folder/repro.py in a fresh child: {"rc", "output", "seconds", "timed_out"}; None if the server failed."""
        try:
            self.proc.stdin.write(json.dumps({"folder": str(folder), "timeout": timeout}) + "\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except (OSError, ValueError):
            return None
        got = self._reply(timeout + 60.0)
        if got is None:  # the server hung or died: no reader may be left on its pipe
            self.kill()
        return got

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        self.proc.wait()


_idle: list[Prover] = []
_starting: dict[int, threading.Thread] = {}  # threads -> the prestart still importing torch
_lock = threading.Lock()


def proof_threads(jobs: int) -> int:
    """The threads a proof gets (OMP_NUM_THREADS of its fresh process): the cores shared by the run's jobs."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


def prestart(threads: int) -> None:
    """Start a prover for `threads` in the background, unless one is idle or starting: a run calls this at its
    first suspicious result, so that the prover's imports overlap the run's other work, not its proofs."""
    with _lock:
        if threads in _starting or any(p.threads == threads and p.alive() for p in _idle):
            return
        th = threading.Thread(target=_start_idle, args=(threads,), daemon=True)
        _starting[threads] = th
    th.start()


def _start_idle(threads: int) -> None:
    try:
        p: Prover | None = Prover(threads)
    except Exception:  # noqa: BLE001 - no prover: take() starts one, or the proof runs the plain way
        p = None
    with _lock:
        _starting.pop(threads, None)
        if p is not None:
            _idle.append(p)


def _join_starting(threads: int | None = None) -> None:
    with _lock:
        pending = [th for t, th in _starting.items() if threads is None or t == threads]
    for th in pending:
        th.join(STARTUP_TIMEOUT)


def take(threads: int) -> Prover:
    """A prover left by an earlier proof or prestarted with the same threads, else a new one."""
    _join_starting(threads)
    with _lock:
        k = next((k for k, p in enumerate(_idle) if p.threads == threads and p.alive()), None)
        if k is not None:
            return _idle.pop(k)
    return Prover(threads)


def give_back(p: Prover) -> None:
    with _lock:
        if p.alive():
            _idle.append(p)
            return
    p.kill()


def retire() -> None:
    """End the provers no proof took, prestarted ones included (a run's end; runners/exec/pool.py's retire calls
    this)."""
    _join_starting()
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for p in idle:
        p.kill()


if __name__ == "__main__":
    serve()

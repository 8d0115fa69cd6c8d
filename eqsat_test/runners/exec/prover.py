"""Fresh processes for the proofs: an interpreter that imports torch once and forks a child for each repro.py, which runs it as `python repro.py` would.

The child is a process of its own (its pid, process group, working folder, stdout and stderr) that has never
compiled or run anything: its parent only imported torch, Dynamo and Inductor (the 3-5 CPU-seconds each fresh
interpreter pays first) and nothing of eqsat-test is left imported in it, so the repro imports what it imports
as in a new interpreter. It shares no state with the warm workers: a finding that reproduces only in a process
that has compiled other programs does not reproduce here. Forking is safe: after these imports the server has
one Python thread and nothing has run on torch yet (tests/warm.py forks the same way).

Server side: `python -m eqsat_test.runners.exec.prover`, one JSON request a line on stdin ({"id", "folder",
"timeout"}), one reply each on stdout as its child ends (RESULT_TAG, {"id", "rc", "output", "seconds", "timed_out"}),
the children running side by side.
Pool side: `Prover`, one per run (`server`, `retire`), that all the run's proofs share, at once: started ahead of
its first use (`prestart`, at a run's first suspicious result) or on it, kept for the next run in the process
(runners/exec/pool.py's keep_warm), ended at the run's end.
"""
from __future__ import annotations

import json
import os
import select
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
READY = "ready"  # the id of the server's first reply
POLL_SECONDS = 0.02  # how often the server looks at its running children


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


class _Proof:
    """One repro.py running in a forked child, with its deadline: `poll` gives its reply once it has ended (or has
    been killed past the deadline)."""

    def __init__(self, req: dict) -> None:
        self.id = req.get("id")
        self.t0 = time.perf_counter()
        self.deadline = time.monotonic() + float(req["timeout"])
        self.out = tempfile.TemporaryFile()  # noqa: SIM115 - closed in poll, when the child has ended
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                code = _child(Path(req["folder"]), self.out.fileno())
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code & 0xFF)

    def poll(self) -> dict | None:
        done, status = os.waitpid(self.pid, os.WNOHANG)
        timed_out = not done and time.monotonic() > self.deadline
        if timed_out:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
            status = os.waitpid(self.pid, 0)[1]
        elif not done:
            return None
        self.out.seek(0)
        text = self.out.read().decode("utf-8", "replace")
        self.out.close()
        return {"id": self.id, "rc": None if timed_out else os.waitstatus_to_exitcode(status),
                "output": text[-OUTPUT_MAX_CHARS:], "seconds": round(time.perf_counter() - self.t0, 3),
                "timed_out": timed_out}


def serve() -> None:
    """Read requests from stdin and prove each at once in a child of its own (several run side by side: a run's
    proofs share one server), replying to each as its child ends. One loop, no threads of its own but the one that only
    sleeps (exit_with_parent): a fork never copies a lock another thread holds."""
    import torch  # noqa: F401  (the imports this server exists to pay once)
    import torch._dynamo  # noqa: F401
    import torch._inductor.compile_fx  # noqa: F401
    reply = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints go to stderr: stdout is the reply channel
    print(RESULT_TAG + json.dumps({"id": READY, "pid": os.getpid()}), file=reply, flush=True)
    exit_with_parent()  # (a child copies only the thread that forks; this one only sleeps)
    running: list[_Proof] = []
    pending, reading = b"", True
    while reading or running:
        ready, _, _ = select.select([0] if reading else [], [], [], POLL_SECONDS if running else None)
        if ready:
            chunk = os.read(0, 1 << 16)
            reading = bool(chunk)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            running += [_Proof(json.loads(line)) for line in lines if line.strip()]
        for proof in list(running):
            got = proof.poll()
            if got is not None:
                running.remove(proof)
                print(RESULT_TAG + json.dumps(got), file=reply, flush=True)


# ----------------------------------------------------------------------------------------------
# pool side


class Prover:
    """One prover server; `run` proves one repro.py, and threads may call it at once (their proofs run side by
    side, a reply each)."""

    def __init__(self, threads: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env["OMP_NUM_THREADS"] = str(threads)  # as a fresh `python repro.py` of the run is given
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        env[PARENT_ENV] = str(os.getpid())
        env.setdefault("PYTHONUNBUFFERED", "1")
        self._replies: dict = {}
        self._ended = False
        self._changed = threading.Condition()
        self._ids = 0
        self.proc = subprocess.Popen([sys.executable, "-m", "eqsat_test.runners.exec.prover"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                     start_new_session=True, bufsize=1)
        threading.Thread(target=self._read, daemon=True).start()
        if self._reply(READY, STARTUP_TIMEOUT) is None:
            self.kill()
            raise RuntimeError("the prover did not start")

    def _read(self) -> None:
        """The one reader of the server's replies: each is filed under its id for the thread that waits on it."""
        for line in self.proc.stdout:  # type: ignore[union-attr]
            if line.startswith(RESULT_TAG):
                got = json.loads(line[len(RESULT_TAG):])
                with self._changed:
                    self._replies[got.pop("id")] = got
                    self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def _reply(self, key, timeout: float) -> dict | None:
        with self._changed:
            self._changed.wait_for(lambda: key in self._replies or self._ended, timeout)
            return self._replies.pop(key, None)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, folder: Path, timeout: float) -> dict | None:
        """folder/repro.py in a fresh child: {"rc", "output", "seconds", "timed_out"}; None if the server failed."""
        with self._changed:
            self._ids += 1
            key = self._ids
            try:
                self.proc.stdin.write(json.dumps({"id": key, "folder": str(folder), "timeout": timeout}) + "\n")  # type: ignore[union-attr]
                self.proc.stdin.flush()  # type: ignore[union-attr]
            except (OSError, ValueError):
                return None
        got = self._reply(key, timeout + 60.0)
        if got is None:  # the server hung or died
            self.kill()
        return got

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        self.proc.wait()


_servers: dict[int, Prover] = {}  # threads -> the run's prover for proofs with that many threads
_starting: dict[int, threading.Thread] = {}  # threads -> the prestart still importing torch
_lock = threading.Lock()


def proof_threads(jobs: int) -> int:
    """The threads a proof gets (OMP_NUM_THREADS of its fresh process): the cores shared by the run's jobs."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


def prestart(threads: int) -> None:
    """Start a prover for `threads` in the background, unless one is live or starting: a run calls this at its
    first suspicious result, so that the prover's imports overlap the run's other work, not its proofs."""
    with _lock:
        live = threads in _servers and _servers[threads].alive()
        if threads in _starting or live:
            return
        th = threading.Thread(target=_start, args=(threads,), daemon=True)
        _starting[threads] = th
    th.start()


def _start(threads: int) -> None:
    try:
        p: Prover | None = Prover(threads)
    except Exception:  # noqa: BLE001 - no prover: server() raises, and the proof runs the plain way
        p = None
    with _lock:
        _starting.pop(threads, None)
        if p is not None:
            _servers[threads] = p


def _join_starting(threads: int | None = None) -> None:
    with _lock:
        pending = [th for t, th in _starting.items() if threads is None or t == threads]
    for th in pending:
        th.join(STARTUP_TIMEOUT)


def server(threads: int) -> Prover:
    """The run's prover for `threads` (the prestarted one, waited for; else one started now): every proof of the
    run goes to it, side by side. RuntimeError where none starts."""
    prestart(threads)
    _join_starting(threads)
    with _lock:
        p = _servers.get(threads)
    if p is None or not p.alive():
        raise RuntimeError("the prover did not start")
    return p


def retire() -> None:
    """End the run's provers, prestarted ones no proof used included (a run's end; runners/exec/pool.py's retire
    calls this)."""
    _join_starting()
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for p in servers:
        p.kill()


if __name__ == "__main__":
    serve()

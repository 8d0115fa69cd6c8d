"""A campaign job's supervisor: runs one job's command and, when the campaign dies (even by kill -9), kills every process of the job at once.

Why: a job (`eqsat-test run`) starts warm worker subprocesses in sessions of their own
(runners/exec/pool.py), so a parent-death signal on the job process alone leaves them running
until their current compile ends (tens of seconds). The supervisor is the campaign's direct child:
it gets SIGTERM when the campaign dies (PR_SET_PDEATHSIG, set by runners/campaign/jobs.py before
exec, and a getppid() check as a fallback), and then SIGKILLs every process whose environment holds
the job's marker (EQSAT_JOB=...), its own process group included.

Run as a script (stdlib only, nothing imported from the project):
    python supervise.py PARENT_PID MARKER -- CMD ...
Its exit status is the job's: the job's exit code, or the job's death signal re-raised on itself.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

POLL_S = 0.5


def processes_with_env(marker: str) -> list[int]:
    """Pids of this user's processes whose environment holds `marker` (e.g. 'EQSAT_JOB=abc')."""
    needle = b"\0" + marker.encode() + b"\0"
    pids = []
    me = os.getpid()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for e in entries:
        if not e.isdigit() or int(e) == me:
            continue
        try:
            with open(f"/proc/{e}/environ", "rb") as fh:
                if needle in b"\0" + fh.read() + b"\0":
                    pids.append(int(e))
        except OSError:
            continue
    return pids


def kill_job(marker: str, rounds: int = 3) -> int:
    """SIGKILL every process marked with `marker` but this one; a few rounds, for processes forked meanwhile."""
    n = 0
    for _ in range(rounds):
        pids = processes_with_env(marker)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                n += 1
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.02)
    return n


def _child_preexec():
    """The job process dies too if the supervisor is SIGKILLed (nothing imported after fork)."""
    import ctypes
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except Exception:
        prctl = None
    parent = os.getpid()

    def fn():
        if prctl is not None:
            prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(137)
    return fn


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: supervise.py PARENT_PID MARKER -- CMD ...", file=sys.stderr)
        return 4
    parent, marker, cmd = int(argv[0]), argv[1], argv[3:]

    def die(signum=None, frame=None):
        kill_job(marker)
        try:
            os.killpg(os.getpgid(0), signal.SIGKILL)  # anything left in our group, ourselves last
        except OSError:
            pass
        os._exit(137)

    signal.signal(signal.SIGTERM, die)  # the campaign died (PR_SET_PDEATHSIG) or asks us to stop
    signal.signal(signal.SIGHUP, die)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the campaign decides about Ctrl-C
    if os.getppid() != parent:  # the campaign died before we could hear of it
        die()
    proc = subprocess.Popen(cmd, preexec_fn=_child_preexec())
    while True:
        try:
            rc = proc.wait(timeout=POLL_S)
            break
        except subprocess.TimeoutExpired:
            if os.getppid() != parent:
                die()
    kill_job(marker)  # stragglers of a finished job (workers it left behind)
    if rc < 0:  # the job died by a signal: so do we, so that the campaign sees the same
        if -rc not in (signal.SIGKILL, signal.SIGSTOP):  # (their handlers cannot be set: always the default)
            signal.signal(-rc, signal.SIG_DFL)
        os.kill(os.getpid(), -rc)
        time.sleep(1)
        return 128 - rc
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

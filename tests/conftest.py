"""Shared test fixtures: run the real `eqsat-test` command line (and scripts it writes) in a process of its own, forked from a warm interpreter (tests/warm.py)."""
from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_MODELS = REPO / "tests" / "models"

# The tests run two processes at a time on two cores (scripts/test.sh: pytest-xdist, one worker per
# core). An OpenMP thread that waits for work at a barrier spins by default (libgomp), burning the
# core the other process needs: the whole-library rule check (2-thread samples) took twice the CPU
# beside a busy process (400 rules: 61 CPU-s spinning, 35 waiting passively; alone, 32). Waiting
# passively changes no result. Set before torch loads; the command lines and workers the tests
# start inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@dataclass
class CliResult:
    rc: int
    stdout: str
    stderr: str

    @property
    def json(self) -> dict:
        return json.loads(self.stdout)


def eqsat_command() -> list[str]:
    """The installed `eqsat-test` script beside this Python, else `python -m runners.cli`."""
    script = Path(sys.executable).parent / "eqsat-test"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "eqsat_test.runners.cli"]


def repo_env() -> dict:
    """This environment with the repository first on PYTHONPATH: what the tests' command lines run with."""
    path = [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path))


class WarmServer:
    """A client of tests/warm.py: runs a command line or a script in a process forked from an interpreter that
    has imported torch and eqsat-test already (a real process, the same code, 4-5 CPU-s of imports fewer each).
    EQSAT_TEST_COLD=1 runs each in a fresh interpreter instead."""

    def __init__(self, scratch: Path):
        self.scratch, self.proc, self.n, self.pending = scratch, None, 0, b""

    def _start(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "warm.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=repo_env(), cwd=self.scratch)
        self.pending = b""
        assert "ready" in self._read(120), "tests/warm.py did not start"

    def _read(self, timeout: float) -> dict:
        """The server's next JSON line. Read from the pipe's descriptor into our own buffer: the pid and the exit
        status of a quick command can come in one read, and a buffered reader would hide the second from select."""
        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            if not select.select([fd], [], [], max(0.0, end - time.monotonic()))[0]:
                raise TimeoutError
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"tests/warm.py ended (status {self.proc.wait()})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def run(self, argv: list, *, cli: bool, cwd: Path, timeout: float = 600,
            env: dict | None = None) -> subprocess.CompletedProcess:
        """`eqsat-test *argv` (cli) or `python *argv`, as subprocess.run(..., capture_output=True, text=True)."""
        argv = list(map(str, argv))
        if os.environ.get("EQSAT_TEST_COLD"):
            cmd = [*eqsat_command(), *argv] if cli else [sys.executable, *argv]
            return subprocess.run(cmd, cwd=cwd, env={**repo_env(), **(env or {})}, capture_output=True, text=True,
                                  timeout=timeout)
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.n += 1
        out, err = self.scratch / f"{self.n}.out", self.scratch / f"{self.n}.err"
        argv0 = eqsat_command()[0] if cli else argv[0]
        req = {"argv": [argv0, *(argv if cli else argv[1:])], "cli": cli, "cwd": str(cwd), "out": str(out),
               "err": str(err), "env": env or {}}
        self.proc.stdin.write(json.dumps(req).encode() + b"\n")
        self.proc.stdin.flush()
        pid = self._read(60)["pid"]
        try:
            rc = self._read(timeout)["rc"]
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):  # (it may end by itself meanwhile)
                os.killpg(pid, signal.SIGKILL)
            self._read(60)
            raise subprocess.TimeoutExpired(argv, timeout) from None
        return subprocess.CompletedProcess(argv, rc, out.read_text(errors="replace"), err.read_text(errors="replace"))

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        shutil.rmtree(self.scratch, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def warm_server() -> WarmServer:
    """This test process's one WarmServer (started at its first command; for helpers that are no fixtures)."""
    server = WarmServer(Path(tempfile.mkdtemp(prefix="eqsat-warm-")))
    atexit.register(server.close)
    return server


@pytest.fixture(scope="session")
def warm() -> WarmServer:
    return warm_server()


@pytest.fixture(scope="session")
def eqsat(tmp_path_factory, warm):
    """eqsat(*args, timeout=...) -> CliResult: the command line, run from a scratch folder (through `warm`)."""
    cwd = tmp_path_factory.mktemp("cli")

    def run(*args: str, timeout: float = 400) -> CliResult:
        p = warm.run(args, cli=True, cwd=cwd, timeout=timeout)
        return CliResult(p.returncode, p.stdout, p.stderr)

    return run


E2E = REPO / "tests" / "e2e"


def pytest_collection_modifyitems(config, items):
    """Everything under tests/e2e/ runs the real command line end to end: marked `slow`, so
    `pytest -m "not slow"` is the fast edit loop. In a parallel run's workers (pytest-xdist, as
    scripts/test.sh runs it), slow tests are handed out first, so that short ones fill in at the
    end rather than one long test running alone."""
    for item in items:
        if E2E in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slow)
    if hasattr(config, "workerinput"):  # (every worker sorts alike: xdist checks they agree)
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable


_GROUPED = re.compile(r"^pytestmark\b.*pytest\.mark\.xdist_group\(", re.M)


@functools.lru_cache(maxsize=None)
def _grouped_module(path: str) -> bool:
    """Whether a test module asks for its tests to run on one worker (`pytestmark =
    pytest.mark.xdist_group(...)`: they share an expensive module-scoped fixture)."""
    try:
        return bool(_GROUPED.search((REPO / path).read_text()))
    except OSError:
        return False


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one worker of a parallel run")


@pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist: unknown without it)
def pytest_xdist_make_scheduler(config, log):
    """`-n N --dist loadgroup` (scripts/test.sh): each test is handed to the next free worker, except
    that the tests of a module marked `pytestmark = pytest.mark.xdist_group(...)` (a module whose
    tests share one expensive fixture, such as one long CLI run) go to one worker together, so that
    the fixture is made once. (xdist's own loadgroup groups through node ids, which it can no
    longer rewrite under pytest 9: its groups are silently ignored.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling  # (pytest-xdist: present when this hook is called)

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::")[0]
            return path if _grouped_module(path) else nodeid

    return ModuleGroups(config, log)

"""Shared test fixtures: run the real `eqsat-test` command line in a subprocess."""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
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
    return [str(script)] if script.is_file() else [sys.executable, "-m", "runners.cli"]


@pytest.fixture(scope="session")
def eqsat(tmp_path_factory):
    """eqsat(*args, timeout=...) -> CliResult, run from a scratch folder with the repo importable."""
    cwd = tmp_path_factory.mktemp("cli")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))

    def run(*args: str, timeout: float = 400) -> CliResult:
        p = subprocess.run([*eqsat_command(), *map(str, args)], cwd=cwd, env=env, capture_output=True,
                           text=True, timeout=timeout)
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

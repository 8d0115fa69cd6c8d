"""Shared test fixtures: run the real `eqsat-test` command line in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_MODELS = REPO / "tests" / "models"


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
    `pytest -m "not slow"` is the fast edit loop."""
    for item in items:
        if E2E in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.slow)

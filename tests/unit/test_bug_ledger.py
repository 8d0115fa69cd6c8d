"""Every repro in the bug ledger (docs/bugs/*.py) runs on the installed torch: it exits 1 while its bug reproduces, 0 once fixed, 77 where it needs a device this machine lacks; anything else is a broken repro."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
REPROS = sorted((REPO / "docs" / "bugs").glob("*.py"))
LEDGER = (REPO / "docs" / "bugs.md").read_text()


def test_every_repro_is_in_the_ledger_and_every_entry_has_its_repro():
    linked = set(re.findall(r"\(bugs/([\w.]+\.py)\)", LEDGER))
    assert linked == {p.name for p in REPROS}


@pytest.mark.slow
@pytest.mark.parametrize("repro", REPROS, ids=[p.stem for p in REPROS])
def test_ledger_repro_runs(repro):
    import torch
    p = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    if p.returncode == 77:
        pytest.skip(f"{repro.name}: {p.stdout.strip()}")
    assert p.returncode in (0, 1), p.stderr[-3000:]
    if p.returncode == 0:
        pytest.xfail(f"fixed in torch {torch.__version__}: {repro.name} no longer reproduces")

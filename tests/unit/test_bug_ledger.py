"""Every repro in the bug ledger (docs/bugs/*.py) runs on the installed torch: it exits 1 while its bug reproduces, 0 once fixed, 77 where it needs a device this machine lacks; anything else is a broken repro."""
from __future__ import annotations

import re
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
def test_ledger_repro_runs(repro, warm, tmp_path):
    """`python repro.py` (tests/conftest.py's `warm`: a process of its own, the imports paid once)."""
    import torch
    p = warm.run([str(repro)], cli=False, cwd=tmp_path, timeout=600, env={"OMP_NUM_THREADS": "1"})
    if p.returncode == 77:
        pytest.skip(f"{repro.name}: {p.stdout.strip()}")
    assert p.returncode in (0, 1), p.stderr[-3000:]
    if p.returncode == 0:
        pytest.xfail(f"fixed in torch {torch.__version__}: {repro.name} no longer reproduces")


def test_ledger_toml_agrees_with_the_ledger_table():
    """docs/bugs/ledger.toml (what reports match findings against) has one entry per row of the table
    in docs/bugs.md: the same ids, the same repro file for each, every repro present; its devices
    cover those the row's "torch / device" column names (an entry may add one the row's text names
    elsewhere: #2's CUDA twin)."""
    import tomllib
    table = LEDGER.split("## Draft issue texts")[0]
    rows = {int(m.group(1)): (m.group(2), m.group(3)) for m in re.finditer(
        r"^\| (\d+) \|.*?\| \[[\w.]+\]\(bugs/([\w.]+\.py)\) \| ([^|]*) \|", table, re.M)}
    assert sorted(rows) == list(range(1, len(rows) + 1)) and len(rows) == len(REPROS)
    bugs = tomllib.loads((REPO / "docs" / "bugs" / "ledger.toml").read_text())["bug"]
    assert [b["id"] for b in bugs] == sorted(rows)
    for b in bugs:
        repro, column = rows[b["id"]]
        assert b["repro"] == repro, f"ledger #{b['id']}"
        assert (REPO / "docs" / "bugs" / b["repro"]).is_file()
        where = column.lower().split("not on")[0]  # "2.11.0+cu130, CUDA (H100); not on 2.13.0 CPU"
        named = {d for d in ("cpu", "cuda") if d in where}
        assert named and named <= set(b["devices"]) <= {"cpu", "cuda"}, f"ledger #{b['id']}: {column}"
        assert b["title"] and b["ops"], f"ledger #{b['id']}"

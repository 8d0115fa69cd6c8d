"""The bug ledger is true on the installed torch: every repro (docs/bugs/*.py) gives the status its row records for this torch and host (exit 1 reproduces, 0 fixed, 77 needs a GPU), and docs/bugs.md's table says what docs/bugs/ledger.toml says.

A status that differs from the ledger's fails the test (a bug fixed, or back): update the row's
`status` in ledger.toml and its cell in docs/bugs.md (`python benchmarks/ledger_status.py --toml`
prints the entries). A torch and host the ledger has no status for (a newer version, a GPU host
not yet recorded) is skipped with the status observed, never passed as agreeing: recording it is
the same command.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from eqsat_test.runners.findings.ledger import load_ledger, status_key

REPO = Path(__file__).resolve().parents[2]
REPROS = sorted((REPO / "docs" / "bugs").glob("*.py"))
LEDGER = (REPO / "docs" / "bugs.md").read_text()
STATUS = {1: "reproduces", 0: "fixed", 77: "needs a GPU"}

ENTRIES = {e.repro: e for e in load_ledger(REPO)}


def test_every_repro_is_in_the_ledger_and_every_entry_has_its_repro():
    linked = set(re.findall(r"\(bugs/([\w.]+\.py)\)", LEDGER))
    assert linked == {p.name for p in REPROS} == set(ENTRIES)


@pytest.mark.slow
@pytest.mark.parametrize("repro", REPROS, ids=[p.stem for p in REPROS])
def test_ledger_repro_status_is_the_ledgers(repro, warm, tmp_path):
    """`python repro.py` (tests/conftest.py's `warm`: a process of its own, the imports paid once) gives
    the ledger's status for this torch and host."""
    p = warm.run([str(repro)], cli=False, cwd=tmp_path, timeout=600, env={"OMP_NUM_THREADS": "1"})
    assert p.returncode in STATUS, f"{repro.name} is broken (exit {p.returncode}): {p.stderr[-3000:]}"
    got, key, entry = STATUS[p.returncode], status_key(), ENTRIES[repro.name]
    want = dict(entry.status).get(key)
    if want is None:
        pytest.skip(f"ledger #{entry.id} has no status for {key}; the repro says {got!r} here "
                    f"(record it: python benchmarks/ledger_status.py --toml)")
    assert got == want, (f"ledger #{entry.id} ({repro.name}) records {want!r} on {key}, the repro says {got!r} "
                         f"(the bug is {'fixed' if got == 'fixed' else 'back' if got == 'reproduces' else got}): update "
                         f"its status in docs/bugs/ledger.toml and docs/bugs.md\n{p.stdout[-1500:]}")


def _table() -> tuple[list[str], dict[int, dict[str, str]]]:
    """docs/bugs.md's ledger table: its header, and per row id the cells by header name."""
    table = LEDGER.split("## Draft issue texts")[0]
    lines = [ln for ln in table.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        rows[int(cells[0])] = dict(zip(head, cells))
    return head, rows


def test_the_table_says_what_ledger_toml_says():
    """The same ids, repro, wrong side and, per status column (a header like "2.13.0 CPU"), the status
    ledger.toml records for that key ("not run" where it records none)."""
    head, rows = _table()
    entries = sorted(ENTRIES.values(), key=lambda e: e.id)
    assert sorted(rows) == [e.id for e in entries] == list(range(1, len(entries) + 1))
    keys = [h for h in head if re.fullmatch(r"\d+\.\d+\.\d+ (CPU|GPU)", h)]
    assert len(keys) >= 3, f"status columns: {keys}"
    for e in entries:
        row = rows[e.id]
        assert f"(bugs/{e.repro})" in row["repro"], f"ledger #{e.id}"
        assert row["wrong side"] == e.wrong_side, f"ledger #{e.id}"
        status = dict(e.status)
        for k in keys:
            assert row[k] == status.get(k.lower(), "not run"), f"ledger #{e.id}, column {k}"
        assert e.title and e.ops and set(e.devices) <= {"cpu", "cuda"}, f"ledger #{e.id}"


def test_ledger_status_write_records_a_hosts_statuses_in_both_files(tmp_path, monkeypatch):
    """`benchmarks/ledger_status.py --write` on a copy: the new key lands in ledger.toml's entries and in the
    table's column for it, the other keys and rows untouched, and the table test's reading agrees."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("ledger_status", REPO / "benchmarks" / "ledger_status.py")
    ls = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ls)
    toml, md = tmp_path / "ledger.toml", tmp_path / "bugs.md"
    toml.write_text((REPO / "docs" / "bugs" / "ledger.toml").read_text())
    md.write_text(LEDGER)
    monkeypatch.setattr(ls, "LEDGER", toml)
    monkeypatch.setattr(ls, "TABLE", md)
    assert ls.write("2.11.0 gpu", {4: "reproduces", 12: "fixed", 13: "broken (exit 3)"}) == []
    import tomllib
    got = {b["id"]: b["status"] for b in tomllib.loads(toml.read_text())["bug"]}
    assert got[4]["2.11.0 gpu"] == "reproduces" and got[12]["2.11.0 gpu"] == "fixed"
    before = {e.id: dict(e.status) for e in ENTRIES.values()}
    assert got[13].get("2.11.0 gpu") == before[13].get("2.11.0 gpu") and got[1] == before[1]  # a broken run: kept
    assert got[4]["2.13.0 cpu"] == dict(ENTRIES["argmax_int8_index_truncated.py"].status)["2.13.0 cpu"]
    rows = {}
    for ln in [ln for ln in md.read_text().split("## Draft issue texts")[0].splitlines() if ln.startswith("|")][2:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        rows[int(cells[0])] = cells
    head, old = _table()
    col = head.index("2.11.0 GPU")
    assert rows[4][col] == "reproduces" and rows[12][col] == "fixed" and rows[13][col] == old[13]["2.11.0 GPU"]
    assert ls.write("9.9.9 cpu", {1: "fixed"})[0].startswith("docs/bugs.md's table has no column")


def test_an_entry_drafts_a_paste_ready_issue_from_its_row_and_repro():
    """scripts/ledger_issue.py: the report holds the entry's title, its row's description and upstream cell, the
    repro's source and the output it printed, and the versions; a missing row is a one-line error."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("ledger_issue", REPO / "scripts" / "ledger_issue.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    entry = next(iter(ENTRIES.values()))
    cells = mod.row_cells(LEDGER, entry.id)
    assert cells[0] == str(entry.id) and len(cells) == len(mod.row_cells(LEDGER, max(e.id for e in ENTRIES.values())))
    text = mod.issue_text(entry, cells, "print('repro')\n", "the output\n", 1, "PyTorch x.y")
    assert text.startswith("# [") and entry.title in text and cells[1] in text and cells[-1] in text
    assert "print('repro')" in text and "the output" in text and "(exit code 1)" in text and "PyTorch x.y" in text
    with pytest.raises(SystemExit, match="no row #9999"):
        mod.row_cells(LEDGER, 9999)

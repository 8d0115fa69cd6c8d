"""The bug ledger's status on this torch: run every repro of docs/bugs/ alone and compare with docs/bugs/ledger.toml.

    python benchmarks/ledger_status.py [--jobs 2] [--only 1,16] [--toml] [--write]

Each repro runs in a fresh process (exit 1: reproduces, 0: fixed, 77: needs a GPU this host lacks;
anything else: a broken repro). The status key is this torch's version and the host kind,
"2.13.0 cpu" or "2.11.0 gpu" (a host with a CUDA device: the repros run there on it). The table
says, per row, what the repro gives here, what the ledger records for this key, and whether they
agree; `--toml` also prints, per row, the `status` entry with this key added, to paste into
ledger.toml (docs/bugs.md's status columns say the same); `--write` puts this host's statuses into
ledger.toml and into docs/bugs.md's column for this key (a header like "2.11.0 GPU") itself. Exit code 1 if any row disagrees with a
status the ledger records (a bug fixed or back), 0 otherwise.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from eqsat_test.runners.findings.ledger import status_key  # noqa: E402

LEDGER = REPO / "docs" / "bugs" / "ledger.toml"
TABLE = REPO / "docs" / "bugs.md"
STATUS = {1: "reproduces", 0: "fixed", 77: "needs a GPU"}


def run_repro(path: Path, timeout: float = 900.0) -> tuple[str, float, str]:
    """(status, seconds, the output's last lines) of one repro run alone."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=path.parent)
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - t0, ""
    out = (p.stdout + p.stderr).strip().splitlines()
    return STATUS.get(p.returncode, f"broken (exit {p.returncode})"), time.perf_counter() - t0, "\n".join(out[-3:])


def _status_line(status: dict) -> str:
    return "status = { " + ", ".join(f'"{k}" = "{v}"' for k, v in status.items()) + " }"


def write(key: str, got: dict[int, str]) -> list[str]:
    """Record `got` (ledger id -> status) under `key` in ledger.toml and in docs/bugs.md's table column for
    that key; a status that is not one of STATUS's (a broken repro, a timeout) is left out. What could not
    be written, one line each."""
    got = {i: s for i, s in got.items() if s in STATUS.values()}
    blocks = re.split(r"(?m)^(?=\[\[bug\]\])", LEDGER.read_text())
    for n, block in enumerate(blocks):
        m = re.search(r"(?m)^id = (\d+)$", block)
        if not m or int(m.group(1)) not in got:
            continue
        status = {**(tomllib.loads(block)["bug"][0].get("status") or {}), key: got[int(m.group(1))]}
        line = _status_line(status)
        blocks[n] = re.sub(r"(?m)^status = \{.*\}$", lambda _, line=line: line, block)
    LEDGER.write_text("".join(blocks))
    lines = TABLE.read_text().splitlines(keepends=True)
    head = next(i for i, ln in enumerate(lines) if ln.startswith("| # |"))
    cols = [c.strip().lower() for c in lines[head].strip().strip("|").split("|")]
    if key not in cols:
        return [f"docs/bugs.md's table has no column {key!r}: add one (header like \"2.11.0 GPU\") and run again"]
    col, i = cols.index(key), head + 2
    while i < len(lines) and lines[i].startswith("|"):
        cells = lines[i].rstrip("\n").strip().strip("|").split("|")
        rid = int(cells[0])
        if rid in got:
            cells[col] = f" {got[rid]} "
            lines[i] = "|" + "|".join(cells) + "|\n"
        i += 1
    TABLE.write_text("".join(lines))
    return []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="ledger ids, comma-separated (default: every row)")
    ap.add_argument("--toml", action="store_true", help="print each row's status entry with this host's key added")
    ap.add_argument("--write", action="store_true",
                    help="record this host's statuses in docs/bugs/ledger.toml and docs/bugs.md's table")
    a = ap.parse_args()
    bugs = tomllib.loads(LEDGER.read_text())["bug"]
    if a.only:
        keep = {int(x) for x in a.only.split(",")}
        bugs = [b for b in bugs if b["id"] in keep]
    key = status_key()
    import torch
    t0 = time.perf_counter()
    def one(b: dict) -> tuple[str, float, str]:
        r = run_repro(REPO / "docs" / "bugs" / b["repro"])
        print(f"  #{b['id']} {b['repro']}: {r[0]} ({r[1]:.0f} s)", file=sys.stderr, flush=True)
        return r
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(one, bugs))
    rows, disagree = [], 0
    for b, (got, secs, _tail) in zip(bugs, results):
        want = (b.get("status") or {}).get(key)
        agree = "-" if want is None else ("yes" if want == got else "NO")
        disagree += agree == "NO"
        rows.append([str(b["id"]), b["repro"], b.get("wrong_side", "?"), got, want or "(none)", agree, f"{secs:.0f}"])
    print(f"torch {torch.__version__} ({key}); {len(bugs)} repros, {time.perf_counter() - t0:.0f} s "
          f"with {a.jobs} at once; python {sys.version.split()[0]}")
    widths = [max(len(r[i]) for r in rows + [HEAD]) for i in range(len(HEAD))]
    for r in [HEAD] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if a.toml:
        print("\n# ledger.toml: each row's status with this host's key")
        for b, (got, _, _) in zip(bugs, results):
            st = {**(b.get("status") or {}), key: got}
            print(f"# id = {b['id']}\nstatus = {{ " + ", ".join(f'"{k}" = "{v}"' for k, v in st.items()) + " }")
    if a.write:
        for line in write(key, {b["id"]: got for b, (got, _, _) in zip(bugs, results)}) or [
                f"written: {key} in docs/bugs/ledger.toml and docs/bugs.md"]:
            print(line)
    if disagree:
        print(f"{disagree} row(s) disagree with the ledger's status for {key}: a bug fixed, or back")
    return 1 if disagree else 0


HEAD = ["#", "repro", "wrong side", "here", "ledger says", "agree", "s"]

if __name__ == "__main__":
    raise SystemExit(main())

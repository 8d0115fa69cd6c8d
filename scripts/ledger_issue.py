"""A ledger entry as a bug report ready to paste into PyTorch's issue form: its title, its row's description, its
standalone repro, what the repro prints on this torch, its status per torch and host, and this host's versions
(torch's collect_env, as a finding's meta.json holds them).

    python scripts/ledger_issue.py N [--out FILE]

The repro runs here, alone, in a fresh process (as benchmarks/ledger_status.py runs it), so the output in the
report is this torch's. Written for the entries no upstream issue names yet; the row's "upstream" cell says what
was searched.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from eqsat_test.runners.findings.ledger import LedgerEntry, load_ledger  # noqa: E402


def row_cells(ledger_md: str, entry_id: int) -> list[str]:
    """The cells of the entry's row of docs/bugs.md's table (markdown: `| 5 | ... |`)."""
    for line in ledger_md.splitlines():
        if line.startswith(f"| {entry_id} |"):
            return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
    raise SystemExit(f"ledger_issue: no row #{entry_id} in docs/bugs.md")


def issue_text(entry: LedgerEntry, cells: list[str], repro_source: str, output: str, exit_code: int,
               versions: str) -> str:
    """The report, as markdown."""
    side = "eager" if entry.wrong_side == "eager" else "torch.compile"
    status = "; ".join(f"{k}: {v}" for k, v in entry.status)
    return "\n".join([
        f"# [{'eager' if entry.wrong_side == 'eager' else 'inductor'}] {entry.title}",
        "",
        "### 🐛 Describe the bug",
        "",
        cells[1] if len(cells) > 1 else entry.title,
        "",
        f"The wrong side is {side}. Standalone repro (torch only; exits 1 while the bug reproduces):",
        "",
        "```python",
        repro_source.rstrip(),
        "```",
        "",
        "Output here:",
        "",
        "```",
        output.rstrip(),
        f"(exit code {exit_code})",
        "```",
        "",
        f"Where it reproduces: {status}.",
        "",
        f"Found by eqsat-test: {cells[-2]}" if len(cells) >= 2 else "",
        "",
        f"Upstream search: {cells[-1]}" if cells else "",
        "",
        "### Versions",
        "",
        "```",
        versions.rstrip(),
        "```",
        "",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("id", type=int, help="the ledger entry (docs/bugs/ledger.toml)")
    ap.add_argument("--out", type=Path, help="write the report here (default: print it)")
    a = ap.parse_args()
    entry = next((e for e in load_ledger(REPO) if e.id == a.id), None)
    if entry is None or entry.repro_path is None or entry.ledger_md is None:
        raise SystemExit(f"ledger_issue: no ledger entry #{a.id}")
    cells = row_cells(entry.ledger_md.read_text(), a.id)
    p = subprocess.run([sys.executable, str(entry.repro_path)], capture_output=True, text=True, timeout=900,
                       cwd=entry.repro_path.parent)
    from eqsat_test.runners.findings.write import collect_env  # (torch)
    text = issue_text(entry, cells, entry.repro_path.read_text(), p.stdout + p.stderr, p.returncode, collect_env())
    if a.out:
        a.out.write_text(text)
        print(f"ledger_issue: #{a.id} -> {a.out}")
    else:
        print(text)


if __name__ == "__main__":
    main()

"""Rediscovery: which of the ledger's compiler bugs that are live on this torch a hunt of generated programs finds again, and after how many minutes.

    python benchmarks/rediscovery.py --minutes 120 --out DIR [--seed 7] [-j 2] [--device cpu] [-- FUZZ OPTIONS]
    python benchmarks/rediscovery.py --out DIR --report-only      # the table of a hunt that ran (or still runs)

Runs `eqsat-test fuzz --minutes M --device D -j J --seed S --out DIR --json` (generated programs only: no
corpus, no zoo, no windows), then reads the hunt's store. The ledger's entries in play are those whose compiled
side is wrong, on the hunt's device, and whose status on this torch and host (`ledger.status_key()`, "2.13.0 cpu")
is "reproduces". An entry counts as found when a root cause of the hunt matches it: as the hunt recorded it, or as
the ledger matches the cluster's pattern on its representative finding now (`hunt_issues.ledger_ids_now`), each listed with the
minutes from the hunt's first job to the first sighting and the cluster's pattern. A match is the ledger's hint
(ops, device, dtype, symptom, wrong side): read each row's repro before quoting it. Also printed: the root
causes that match no entry (each needs triage), and how many came only from a rewritten variant.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, machine, table  # (benchmarks/common.py puts the repository on sys.path)

from eqsat_test.runners.campaign.hunt_issues import ledger_ids_now
from eqsat_test.runners.campaign.store import open_store
from eqsat_test.runners.findings.ledger import load_ledger, status_key


def in_play(ledger, device: str, key: str) -> list:
    """The ledger's compiler bugs on `device` that reproduce on this torch and host."""
    return [e for e in ledger if e.wrong_side == "compiled" and device in e.devices
            and dict(e.status).get(key) == "reproduces"]


def report(out: Path, device: str, upto: int | None = None) -> int:
    store = open_store(out)
    ledger = load_ledger()
    key = status_key()
    wanted = [e for e in in_play(ledger, device, key) if upto is None or e.id <= upto]
    db = store.db
    t0 = db.execute("SELECT MIN(started) FROM jobs").fetchone()[0]
    t1 = db.execute("SELECT MAX(finished) FROM jobs").fetchone()[0]
    judged = db.execute("SELECT COUNT(*) FROM jobs WHERE status = 'done'").fetchone()[0]
    clusters = [c for c in store.clusters() if c.device == device or device in str(c.device).split("/")]
    seen = {k: t for k, t in db.execute("SELECT key, first_seen FROM clusters")}

    def first_seen(c) -> float:
        return min((seen[k] for k in (c.key, *c.absorbed) if seen.get(k)), default=t0 or 0.0)

    found: dict[int, list] = {}
    new = []
    for c in clusters:
        ids = set(c.ledger) | set(ledger_ids_now(c, ledger))
        for i in ids:
            found.setdefault(i, []).append(c)
        if not ids:
            new.append(c)
    rows = []
    for e in wanted:
        cs = sorted(found.get(e.id, []), key=first_seen)
        first = cs[0] if cs else None
        at = f"{(first_seen(first) - t0) / 60:.1f}" if first and t0 else "-"
        rows.append([e.id, e.title[:70], "yes" if cs else "no", at, len(cs),
                     " ".join(first.pattern[:6]) if first else ""])
    print(f"machine: {machine()}; hunt {out}; ledger key {key!r}; device {device}")
    span = f"{(t1 - t0) / 60:.1f} min" if t0 and t1 else "?"
    print(f"hunt: {judged} programs judged over {span} (first job start to last job end)")
    print(table(rows, ["#", "ledger entry", "found", "first at min", "root causes", "first pattern"]))
    hits = sum(1 for r in rows if r[2] == "yes")
    print(f"found again: {hits} of {len(wanted)} compiler-side entries live on {key}"
          + (f" (entries up to #{upto})" if upto else "") + " "
          f"(goal: at least half, {(len(wanted) + 1) // 2})")
    print(f"root causes: {len(clusters)}; matching no ledger entry: {len(new)} (triage each); "
          f"only a rewritten variant exposed: {sum(1 for c in clusters if not c.seed_fails)}")
    for c in new:
        print(f"  - {c.kind} {c.symptom}, {c.input_class}: {' '.join(c.pattern[:8])} | {c.repro}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=120.0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--ledger-upto", type=int, default=None,
                    help="count only entries up to this id (the ledger as it was when the hunt started)")
    ap.add_argument("--report-only", action="store_true", help="only read the hunt in --out")
    ap.add_argument("extra", nargs="*", help="more `eqsat-test fuzz` options (after --)")
    a = ap.parse_args()
    if not a.report_only:
        cmd = [sys.executable, "-m", "eqsat_test.runners.cli", "fuzz", "--minutes", str(a.minutes), "--device", a.device,
               "-j", str(a.jobs), "--seed", str(a.seed), "--out", str(a.out), "--json", *a.extra]
        print("running:", " ".join(cmd), flush=True)
        t = time.monotonic()
        rc = subprocess.run(cmd, cwd=REPO, stdout=subprocess.DEVNULL).returncode
        print(f"eqsat-test fuzz: exit {rc} after {(time.monotonic() - t) / 60:.1f} min", flush=True)
    return report(a.out, a.device, a.ledger_upto)


if __name__ == "__main__":
    sys.exit(main())

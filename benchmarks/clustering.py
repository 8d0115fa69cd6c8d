"""Root-cause clustering on seeds with known root causes: findings before clustering, clusters, the true root causes (the ledger's), notes before and after aggregation, side by side from one campaign.

    python benchmarks/clustering.py [--out DIR] [--variants 8] [--device cpu] [--jobs N]

The seeds are benchmarks/models/clustering/*.py: one per ledger entry reachable on the CPU
(docs/bugs.md; #1 through the rewrite rsqrt(v) -> v ** -0.5 of tests/models/live_bug_rules, #2
through the int16 sweep, #20 through the size sweep), a model holding two root causes on two
outputs, and two clean models (one nondeterministic: dropout in training mode). EXPECTED below
says which ledger entries each seed was written for. The campaign (the real `eqsat-test campaign`,
every seed x the built-in library plus the live rules x inductor) goes to OUT and resumes there:
a second call with the same OUT only reads the store and prints.

Printed per model and in total: compiler-bug candidates of the runs (variants failing like their
seed included, before folding), distinct signatures (what the store counted as distinct before
clusters), root causes (clusters), the ledger entries expected and those the clusters matched,
notes and note groups. Then the checks the clustering must pass: clusters <= 1.5 x the true root
causes (the expected ledger entries of the seeds that failed at all, plus every cluster matching no
ledger entry, each a root cause of its own as far as anyone knows); no cluster mixes two ledger
entries (its members come from seeds written for different entries, or it matches two); at most
one note line per (model, kind, cause).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, table  # noqa: E402

SEEDS = REPO / "benchmarks" / "models" / "clustering"
LIVE_RULES = REPO / "tests" / "models" / "live_bug_rules"
EXPECTED: dict[str, tuple[int, ...]] = {  # seed file -> the ledger entries it was written for
    "rsqrt_scale.py": (1,), "int16_abs_offset.py": (2,), "uint8_row_checksum.py": (5,),
    "expm1_small_rates.py": (6,), "floordiv_bins.py": (7,), "remainder_phase.py": (8,), "acosh_energy.py": (9,),
    "atanh_weak_correlation.py": (10,), "mask_difference.py": (15,), "std_of_pooled.py": (20,),
    "two_bugs_decay_and_bins.py": (6, 7), "clean_mlp.py": (), "clean_dropout_train.py": (),
}
RATIO = 1.5


def write_spec(out: Path, variants: int, device: str, jobs: int | None) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    spec = out / "clustering.toml"
    models = ", ".join(json.dumps(str(SEEDS / m)) for m in EXPECTED)
    spec.write_text(
        'name = "clustering"\n'
        f"models = [{models}]\n"
        f'rule_sets = [["default", {json.dumps(str(LIVE_RULES))}]]\n'
        'backends = ["inductor"]\n'
        f'devices = ["{device}"]\n'
        f"variants = {variants}\n"
        "seeds = [0]\n"
        'inputs = "given,random,special"\n'
        'run_args = ["--no-artifacts"]\n'
        + (f"jobs = {jobs}\n" if jobs else "")
        + "[budget]\njob_timeout = 3600\nvariant_timeout = 600\n")
    return spec


def run_campaign(spec: Path, out: Path) -> float:
    t0 = time.perf_counter()
    cmd = [str(Path(sys.executable).with_name("eqsat-test")), "campaign", str(spec), "--out", str(out)]
    p = subprocess.run(cmd, cwd=REPO, text=True, capture_output=True)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        raise SystemExit(f"campaign exited {p.returncode}")
    (out / "campaign-summary.txt").write_text(p.stdout)
    return time.perf_counter() - t0


def measure(out: Path) -> dict:
    from eqsat_test.runners.campaign.store import open_store
    with open_store(out) as st:
        jobs = [j for j in st.jobs() if j["status"] == "done"]
        findings = st.findings()
        clusters = st.clusters()
        sightings = st.cluster_sightings()
        groups = st.note_groups()
    per: dict[str, dict] = {}
    for j in jobs:
        name = Path(j["model"]).name
        rep = (j.get("result") or {}).get("report") or {}
        st_ = rep.get("stats") or {}
        row = per.setdefault(name, {"candidates": 0, "signatures": 0, "clusters": set(), "matched": set(),
                                    "notes": 0, "note_groups": 0})
        row["candidates"] += int(st_.get("compiler_bugs") or 0) + int(st_.get("folded_into_seed") or 0)
        row["notes"] += int(st_.get("notes") or 0)
    for f in findings:
        if f["compiler_bug"]:
            for name in {Path(s["model"]).name for s in f["sightings"]}:
                per.setdefault(name, {"candidates": 0, "signatures": 0, "clusters": set(), "matched": set(),
                                      "notes": 0, "note_groups": 0})["signatures"] += 1
    for c in clusters:
        for s in sightings.get(c.key) or []:
            row = per.get(Path(s["model"]).name)
            if row is not None:
                row["clusters"].add(c.key)
                row["matched"].update(c.ledger)
    for g in groups:
        row = per.get(Path(g.model).name)
        if row is not None:
            row["note_groups"] += 1
    return {"jobs": jobs, "per": per, "clusters": clusters, "sightings": sightings, "groups": groups,
            "signatures": sum(1 for f in findings if f["compiler_bug"])}


def report(m: dict) -> int:
    per, clusters, sightings, groups = m["per"], m["clusters"], m["sightings"], m["groups"]
    rows = []
    for name in EXPECTED:
        r = per.get(name)
        if r is None:
            rows.append([name, "-", "-", "-", ",".join(map(str, EXPECTED[name])) or "-", "-", "-", "-"])
            continue
        rows.append([name, r["candidates"], r["signatures"], len(r["clusters"]),
                     ",".join(f"#{i}" for i in EXPECTED[name]) or "-",
                     ",".join(f"#{i}" for i in sorted(r["matched"])) or "-", r["notes"], r["note_groups"]])
    failing = [n for n, r in per.items() if r["clusters"]]
    true_known = sorted({i for n in failing for i in EXPECTED.get(n, ())})
    unmatched = [c for c in clusters if not c.ledger]
    true = len(true_known) + len(unmatched)
    rows.append(["total", sum(r["candidates"] for r in per.values()), m["signatures"], len(clusters),
                 f"{len(true_known)} found of {len({i for v in EXPECTED.values() for i in v})}",
                 len({i for c in clusters for i in c.ledger}), sum(r["notes"] for r in per.values()), len(groups)])
    print(table(rows, ["model", "candidates", "signatures", "root causes", "ledger expected", "ledger matched",
                       "notes", "note groups"]))
    print()
    print("root causes (clusters):")
    for i, c in enumerate(clusters, 1):
        models = sorted({Path(s["model"]).name for s in sightings.get(c.key) or []})
        print(f"  {i:>2}. {c.line()}  [{', '.join(models)}]")
    print("note groups:")
    for g in groups:
        print(f"  - {Path(g.model).name}: {g.line()}")
    print()
    # the checks
    mixed = []
    for c in clusters:
        models = {Path(s["model"]).name for s in sightings.get(c.key) or []}
        singles = {EXPECTED[n] for n in models if len(EXPECTED.get(n, ())) == 1}
        if len(c.ledger) > 1 or len(singles) > 1:
            mixed.append(c)
    lines: dict[tuple, int] = {}
    for g in groups:
        k = (g.model, g.kind, g.cause)
        lines[k] = lines.get(k, 0) + 1
    ok_ratio = len(clusters) <= RATIO * max(true, 1)
    print(f"true root causes: {true} ({len(true_known)} ledger entries the failing seeds were written for: "
          f"{', '.join(f'#{i}' for i in true_known) or '-'}; {len(unmatched)} cluster(s) matching no entry)")
    print(f"clusters {len(clusters)} <= {RATIO} x true root causes {true}: {'yes' if ok_ratio else 'NO'} "
          f"(ratio {len(clusters) / max(true, 1):.2f}; signatures before clustering {m['signatures']}, "
          f"{m['signatures'] / max(true, 1):.2f} x)")
    print(f"clusters mixing two ledger entries: {len(mixed)}" + "".join(f"\n  {c.line()}" for c in mixed))
    worst = max(lines.values(), default=0)
    print(f"note lines per (model, kind, cause): at most {worst} "
          f"({sum(r['notes'] for r in per.values())} notes in {len(groups)} lines)")
    return 0 if ok_ratio and not mixed and worst <= 1 else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "clustering-out")
    ap.add_argument("--variants", type=int, default=8)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--jobs", type=int, default=None, help="campaign jobs at once (default: the campaign's)")
    ap.add_argument("--no-run", action="store_true", help="only read OUT's store and print")
    a = ap.parse_args()
    import torch
    print(f"clustering benchmark: torch {torch.__version__}, device {a.device}, {a.variants} variants per seed, "
          f"{time.strftime('%Y-%m-%d')}")
    if not a.no_run:
        spec = write_spec(a.out, a.variants, a.device, a.jobs)
        secs = run_campaign(spec, a.out)
        print(f"campaign: {a.out} ({secs:.0f} s this call)")
    return report(measure(a.out))


if __name__ == "__main__":
    raise SystemExit(main())

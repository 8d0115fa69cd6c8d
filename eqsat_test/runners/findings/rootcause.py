"""One root cause, one finding: variant candidates the seed already shows are folded into the seed's, and findings with one signature are deduplicated."""
from __future__ import annotations

from eqsat_test.runners.findings.write import signature
from eqsat_test.runners.records import FindingKind

_SAME_PROGRAM_KINDS = (FindingKind.MISCOMPILE.value, FindingKind.COMPILE_CRASH.value, FindingKind.RUN_CRASH.value,
                       FindingKind.TIMEOUT.value, FindingKind.GRAD_MISCOMPILE.value)


def _seed_key(f: dict) -> tuple:
    return (f.get("graph"), f.get("backend"), f.get("device"))


def fold_into_seeds(findings: list[dict]) -> list[dict]:
    """A variant candidate whose seed (same graph, backend and device) fails the same way on the
    same input set is the seed's finding, not the rules': the variant is recorded on the seed's
    finding (`variants_failing_alike`) and no rule is blamed. Same way: for a miscompile, the seed
    also miscompiles on that input set; for a crash or timeout, the seed crashes with the same
    error type or times out too."""
    seeds: dict[tuple, list[dict]] = {}
    for f in findings:
        if f["kind"] == FindingKind.SEED_MISCOMPILE or (f.get("seed") and f["kind"] in _SAME_PROGRAM_KINDS):
            seeds.setdefault(_seed_key(f), []).append(f)
    kept = []
    for f in findings:
        if f.get("seed") or f["kind"] not in _SAME_PROGRAM_KINDS or f.get("sweep"):
            kept.append(f)
            continue
        seed_f = next((s for s in seeds.get(_seed_key(f), []) if _fails_alike(s, f)), None)
        if seed_f is None:
            kept.append(f)
            continue
        seed_f.setdefault("variants_failing_alike", []).append(f["variant"])
    return kept


def _fails_alike(seed_f: dict, f: dict) -> bool:
    if f["kind"] == FindingKind.MISCOMPILE:
        return seed_f["kind"] == FindingKind.SEED_MISCOMPILE and seed_f.get("input_set") == f.get("input_set")
    if f["kind"] == FindingKind.TIMEOUT:
        return seed_f["kind"] == FindingKind.TIMEOUT
    if f["kind"] == FindingKind.GRAD_MISCOMPILE:  # training mode: the seed's gradients fail on that input set too
        return seed_f["kind"] == FindingKind.GRAD_MISCOMPILE and seed_f.get("input_set") == f.get("input_set")
    same_type = (seed_f.get("error") or {}).get("type") == (f.get("error") or {}).get("type")
    return seed_f["kind"] == f["kind"] and same_type


def dedupe(findings: list[dict]) -> list[dict]:
    """One finding per signature, with a count and the variants it was seen in."""
    by_sig: dict[str, dict] = {}
    for f in findings:
        sig = signature(f)
        if sig in by_sig:
            kept = by_sig[sig]
            if _better_representative(f, kept):  # the seed, or the smaller program, represents the bug
                alike = list(f.get("variants_failing_alike") or [])
                by_sig[sig] = {**f, "signature": sig, "count": kept["count"] + len(alike),
                               "also_seen_in": [kept["variant"], *kept["also_seen_in"], *alike]}
                kept = by_sig[sig]
            else:
                kept["also_seen_in"] += [f["variant"], *(f.get("variants_failing_alike") or [])]
                kept["count"] += len(f.get("variants_failing_alike") or [])
            kept["count"] += 1
        else:
            alike = list(f.get("variants_failing_alike") or [])  # folded into this seed's finding
            by_sig[sig] = {**f, "signature": sig, "count": 1 + len(alike), "also_seen_in": alike}
    return list(by_sig.values())


def _better_representative(f: dict, kept: dict) -> bool:
    def rank(x: dict) -> tuple:
        return (x["kind"] != FindingKind.SEED_MISCOMPILE and not x.get("seed"), len(x.get("min_ops") or x.get("ops") or []))
    return rank(f) < rank(kept)

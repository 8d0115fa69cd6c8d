"""One root cause, one finding: variant candidates the seed already shows are folded into the seed's, and findings with one signature are deduplicated."""
from __future__ import annotations

from eqsat_test.runners.findings.write import signature
from eqsat_test.runners.records import Finding, FindingKind, as_finding

_SAME_PROGRAM_KINDS = (FindingKind.MISCOMPILE.value, FindingKind.COMPILE_CRASH.value, FindingKind.RUN_CRASH.value,
                       FindingKind.TIMEOUT.value, FindingKind.GRAD_MISCOMPILE.value,
                       FindingKind.COMPILED_NONDETERMINISTIC.value)


def _seed_key(f: Finding) -> tuple:
    return (f.graph, f.backend, f.device)


def fold_into_seeds(findings: list) -> list[Finding]:
    """A variant candidate whose seed (same graph, backend and device) fails the same way on the
    same input set is the seed's finding, not the rules': the variant is recorded on the seed's
    finding (`variants_failing_alike`) and no rule is blamed. Same way: for a miscompile, the seed
    also miscompiles on that input set; for a crash or timeout, the seed crashes with the same
    error type or times out too."""
    findings = [as_finding(f) for f in findings]
    seeds: dict[tuple, list[Finding]] = {}
    for f in findings:
        if f.kind == FindingKind.SEED_MISCOMPILE or (f.seed and f.kind in _SAME_PROGRAM_KINDS):
            seeds.setdefault(_seed_key(f), []).append(f)
    kept = []
    alike: dict[int, list[str]] = {}  # id(a seed's finding) -> the variants that fail as it does
    for f in findings:
        if f.seed or f.kind not in _SAME_PROGRAM_KINDS or f.sweep:
            kept.append(f)
            continue
        seed_f = next((s for s in seeds.get(_seed_key(f), []) if _fails_alike(s, f)), None)
        if seed_f is None:
            kept.append(f)
            continue
        alike.setdefault(id(seed_f), []).append(str(f.variant))
    return [f.with_(variants_failing_alike=[*(f.variants_failing_alike or []), *alike[id(f)]])
            if id(f) in alike else f for f in kept]


def _fails_alike(seed_f: Finding, f: Finding) -> bool:
    if f.kind == FindingKind.MISCOMPILE:
        return seed_f.kind == FindingKind.SEED_MISCOMPILE and seed_f.input_set == f.input_set
    if f.kind == FindingKind.TIMEOUT:
        return seed_f.kind == FindingKind.TIMEOUT
    if f.kind == FindingKind.GRAD_MISCOMPILE:  # training mode: the seed's gradients fail on that input set too
        return seed_f.kind == FindingKind.GRAD_MISCOMPILE and seed_f.input_set == f.input_set
    same_type = (seed_f.error or {}).get("type") == (f.error or {}).get("type")
    return seed_f.kind == f.kind and same_type


def dedupe(findings: list) -> list[Finding]:
    """One finding per signature, with a count and the variants it was seen in."""
    by_sig: dict[str, Finding] = {}
    for f in map(as_finding, findings):
        sig = signature(f)
        alike = list(f.variants_failing_alike or [])  # folded into this seed's finding
        if sig in by_sig:
            kept = by_sig[sig]
            if _better_representative(f, kept):  # the seed, or the smaller program, represents the bug
                by_sig[sig] = f.with_(signature=sig, count=(kept.count or 1) + len(alike) + 1,
                                      also_seen_in=[kept.variant, *(kept.also_seen_in or []), *alike])
            else:
                by_sig[sig] = kept.with_(also_seen_in=[*(kept.also_seen_in or []), f.variant, *alike],
                                         count=(kept.count or 1) + len(alike) + 1)
        else:
            by_sig[sig] = f.with_(signature=sig, count=1 + len(alike), also_seen_in=alike)
    return list(by_sig.values())


def _better_representative(f: Finding, kept: Finding) -> bool:
    def rank(x: Finding) -> tuple:
        return (x.kind != FindingKind.SEED_MISCOMPILE and not x.seed, len(x.min_ops or x.ops or []))
    return rank(f) < rank(kept)

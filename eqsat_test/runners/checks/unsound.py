"""The unsound-rewrite check: a variant's eager output against its seed's on one input set (a difference is a rule's fault, not the compiler's)."""
from __future__ import annotations

from pathlib import Path

from eqsat_test.runners.exec.protocol import load_tensors
from eqsat_test.runners.oracle.grad import part_of
from eqsat_test.runners.oracle.judge import Verdict, compare_eager


def unsound_verdict(seed_file: Path, variant_file: Path, v: dict, manifest: dict,
                    seed_fp64_file: Path | None = None) -> Verdict | None:
    """The failing verdict of the variant's saved eager outputs against its seed's, or None: both
    files are not there, the two agree, or they differ only in NaN/inf positions and the variant was
    made with rules declared ieee-edge or approximate (it does what its rules say: expected), or, in
    training mode, only a gradient differs and some rule that made the variant has a gradient class other
    than exact (rewrite/rulegrad.py: its sides' gradients may differ at ties and kinks). seed_fp64_file (training
    mode): the seed's fp64 run is the judge, as for compiled code (a gradient sums many terms, and a rewrite
    that reorders them, as an exact rule may through another kernel, moves a near-zero sum by its rounding)."""
    if not (seed_file.is_file() and variant_file.is_file()):
        return None
    fp64 = load_tensors(seed_fp64_file) if seed_fp64_file is not None and seed_fp64_file.is_file() else None
    verdict = compare_eager(load_tensors(seed_file), load_tensors(variant_file), fp64)
    if verdict.ok:
        return None
    numerics = manifest["rules"].get("numerics", {})
    declared = {numerics.get(name) for name in v.get("rules", [])}
    if "NaN/Inf positions" in verdict.detail and declared & {"ieee-edge", "approximate"}:
        return None
    if part_of(verdict.leaf) == "gradient":  # training mode: only rules whose gradients are declared exact answer for them
        grads = manifest["rules"].get("grad", {})
        if any(grads.get(name) != "exact" for name in v.get("rules", [])):
            return None
    return verdict

"""The unsound-rewrite check: a variant's eager output against its seed's on one input set (a difference is a rule's fault, not the compiler's)."""
from __future__ import annotations

import re
from pathlib import Path

from eqsat_test.runners.exec.protocol import load_tensors
from eqsat_test.runners.oracle.judge import Verdict, compare_eager
from eqsat_test.runners.records import FindingKind

# Eager failures no rewrite can cause: rules rewrite values, and where a value lives is the emitter's choice
# (lowering/emit.py makes every created tensor on the program's DEVICE). Such a failure is eqsat-test's own.
EMITTER_FAULTS = re.compile(r"Expected all tensors to be on the same device|found at least two devices|"
                            r"Expected .* to be on the same device|is on (cpu|cuda)[^,]*, but .* on (cpu|cuda)")


def eager_failure_kind(message: str, seed: bool) -> FindingKind:
    """The note for a program that raises in eager mode: emit-error where the emitter is at fault
    (EMITTER_FAULTS), else seed-error for the unmodified model and unsound-rewrite for a variant."""
    if EMITTER_FAULTS.search(message or ""):
        return FindingKind.EMIT_ERROR
    return FindingKind.SEED_ERROR if seed else FindingKind.UNSOUND_REWRITE


def unsound_verdict(seed_file: Path, variant_file: Path, v: dict, manifest: dict) -> Verdict | None:
    """The failing verdict of the variant's saved eager outputs against its seed's, or None: both
    files are not there, the two agree, or they differ only in NaN/inf positions and the variant was
    made with rules declared ieee-edge or approximate (it does what its rules say: expected)."""
    if not (seed_file.is_file() and variant_file.is_file()):
        return None
    verdict = compare_eager(load_tensors(seed_file), load_tensors(variant_file))
    if verdict.ok:
        return None
    numerics = manifest["rules"].get("numerics", {})
    declared = {numerics.get(name) for name in v.get("rules", [])}
    if "NaN/Inf positions" in verdict.detail and declared & {"ieee-edge", "approximate"}:
        return None
    return verdict

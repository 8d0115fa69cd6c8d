"""The unsound-rewrite check: a variant's eager output against its seed's on one input set (a difference is a rule's fault, not the compiler's).

What a variant's rules declare decides what difference is expected:
- `exact` rules only: any difference beyond rounding of the output is a note (a loud one: the rule
  is wrong);
- an `ieee-edge` or `approximate` rule among them: NaN/inf positions may differ;
- an `approximate` rule among them (reassociation and the like): values may differ by what a
  different order of rounding gives at the program's scale, which grows with the magnitude of the
  terms and their number. Expected where either holds: every element within REASSOC_TERMS
  roundings (eps of the leaf's dtype) of the leaf's largest magnitude (a sum of that many terms,
  each as large as the largest output, rounded in another order: logits of magnitude 1e10 may
  move by 1e5); or, with the seed's fp64 run saved beside its eager output (`<set>.fp64.pt`), the
  variant judged against it with the seed's own error as the yardstick (the oracle's rule 1: the
  seed's error shows, element by element, how large the rounding is where terms cancel to a small
  output, as in a normalization of large values).
"""
from __future__ import annotations

import re
from pathlib import Path

import torch

from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.grad import part_of
from eqsat_test.runners.oracle.judge import Verdict, compare_eager
from eqsat_test.runners.protocol import load_tensors
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

REASSOC_TERMS = 64  # without an fp64 run: terms per reordered sum, each up to the leaf's largest magnitude


def fp64_file(eager_file: Path) -> Path:
    """Where a task saved the fp64 run beside an eager output (runners/worker.py, checks/sweep_run.py)."""
    return eager_file.with_suffix(".fp64.pt")


def unsound_verdict(seed_file: Path, variant_file: Path, v: Variant, manifest: Manifest,
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
    seed, var = load_tensors(seed_file), load_tensors(variant_file)
    fp64 = load_tensors(seed_fp64_file) if seed_fp64_file is not None and seed_fp64_file.is_file() else None
    verdict = compare_eager(seed, var, fp64)
    if verdict.ok:
        return None
    numerics = manifest.rules.numerics
    declared = {(v.rule_numerics or {}).get(name) or numerics.get(name) for name in v.rules}
    if "NaN/Inf positions" in verdict.detail and declared & {"ieee-edge", "approximate"}:
        return None
    if part_of(verdict.leaf) == "gradient":  # training mode: only rules whose gradients are declared exact answer for them
        grads = manifest.rules.grad or {}
        if any(grads.get(name) != "exact" for name in v.rules):
            return None
    if "approximate" in declared and within_reassociation(seed, var, fp64_file(seed_file)):
        return None
    return verdict


def within_reassociation(seed, var, seed_fp64: Path | None = None) -> bool:
    """Whether `var` differs from `seed` (two eager outputs of equivalent programs) by no more than a
    different order of rounding gives at their scale (the module docstring)."""
    if within_scale(seed, var):
        return True
    return seed_fp64 is not None and seed_fp64.is_file() and compare_eager(seed, var, load_tensors(seed_fp64)).ok


def within_scale(seed, var) -> bool:
    """Every floating element within REASSOC_TERMS eps of its leaf's largest |seed|; the rest equal."""
    pairs_s, pairs_v = nx.leaves(seed), nx.leaves(var)
    if [p for p, _ in pairs_s] != [p for p, _ in pairs_v]:
        return False
    for (_, s), (_, c) in zip(pairs_s, pairs_v):
        if not (isinstance(s, torch.Tensor) and isinstance(c, torch.Tensor)):
            if s != c and not (s != s and c != c):  # Python scalars: equal, or both NaN
                return False
            continue
        if s.shape != c.shape or s.dtype != c.dtype:
            return False
        if not s.is_floating_point():
            if not torch.equal(s, c):
                return False
            continue
        s64, c64 = s.double(), c.double()
        fin = torch.isfinite(s64) & torch.isfinite(c64)
        if not bool((fin | (torch.isnan(s64) & torch.isnan(c64)) | (s64 == c64)).all()):
            return False  # NaN/inf positions: the caller's rule, not this one
        if not bool(fin.any()):
            continue
        scale = float(s64[fin].abs().max())
        if bool(((s64 - c64).abs()[fin] > REASSOC_TERMS * nx.eps(s.dtype) * scale).any()):
            return False
    return True

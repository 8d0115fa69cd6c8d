"""The CLI's measurement modes: --coverage (compiler lines per task) and --mode guided (coverage-guided extraction)."""
from __future__ import annotations

from pathlib import Path

import click

# Imports inside functions: guided extraction needs the generation half (egglog); `eqsat-test exec` does not.


def coverage_on(eo) -> None:
    """--coverage: every task records the compiler lines it reaches (runners/exec/compiler_lines.py)."""
    from eqsat_test.runners.exec.compiler_lines import CoverageUnavailable, coverage_mode
    try:
        coverage_mode(eo)
    except CoverageUnavailable as e:
        raise click.UsageError(str(e)) from None


def guided_keep(modes: tuple, eo) -> list | None:
    """With --mode guided, a list for generate() to keep each graph's state in (and coverage on: the
    guide feeds on the lines each variant reaches); else None."""
    if "guided" not in modes:
        return None
    if not eo.coverage:
        coverage_on(eo)
    return []


def guided_attach(keep: list | None, manifest: dict, bundle: Path, eo, seed: int, memory: str | None) -> None:
    """The run's Guide (rewrite/guide.py), on the ExecOptions: it draws the rest of the variants as results come."""
    if keep is None:
        return
    from eqsat_test.rewrite.guide import Guide, RuleMemory
    eo.guide = Guide(keep, manifest, bundle, seed=seed, memory=RuleMemory.load(memory))


def guided_finish(eo, memory: str | None) -> None:
    """--guide-memory: the rules' credit of this run added to the campaign's memory file."""
    if eo.guide is not None and memory:
        eo.guide.memory.merged(eo.guide.rules).save(memory)

"""The CLI's measurement modes: --coverage (compiler lines per task) and --mode guided (coverage-guided extraction)."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from eqsat_test.lowering.manifest import Manifest
    from eqsat_test.runners.pipeline import ExecOptions

# Imports inside functions: guided extraction needs the generation half (egglog); `eqsat-test exec` does not.


def coverage_on(eo: ExecOptions) -> ExecOptions:
    """--coverage: the options with which every task records the compiler lines it reaches
    (runners/exec/compiler_lines.py)."""
    from eqsat_test.runners.exec.compiler_lines import CoverageUnavailable, coverage_mode
    try:
        return coverage_mode(eo)
    except CoverageUnavailable as e:
        raise click.UsageError(str(e)) from None


def guided_keep(modes: tuple) -> list | None:
    """With --mode guided, a list for generate() to keep each graph's state in (its options have coverage on:
    the guide feeds on the lines each variant reaches, runners/cli/options.py); else None."""
    return [] if "guided" in modes else None


def guided_attach(keep: list | None, manifest: Manifest, bundle: Path, eo: ExecOptions,
                  memory: str | None) -> ExecOptions:
    """The options with the run's Guide (rewrite/guide.py): it draws the rest of the variants as results come."""
    if keep is None:
        return eo
    from eqsat_test.rewrite.guide import Guide, RuleMemory
    return dataclasses.replace(eo, guide=Guide(keep, manifest, bundle, seed=eo.seed, memory=RuleMemory.load(memory)))


def guided_finish(eo, memory: str | None) -> None:
    """--guide-memory: the rules' credit of this run added to the campaign's memory file."""
    if eo.guide is not None and memory:
        eo.guide.memory.merged(eo.guide.rules).save(memory)

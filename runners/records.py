"""Typed records at the execution half's boundaries: exit codes, finding kinds, tasks, results and findings, with JSON round trips."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any


class ExitCode(IntEnum):
    """Exit codes of every eqsat-test command, as pytest's."""

    OK = 0  # nothing found
    FOUND = 1  # compiler-bug candidates found
    INTERRUPTED = 2  # interrupted, or a budget ran out (run again to resume a campaign)
    INTERNAL = 3  # an internal error of eqsat-test
    USAGE = 4  # usage error or bad input (one line, no traceback)


class FindingKind(str, Enum):
    """What a finding or note is. Compiler-bug kinds set exit code 1; notes never do."""

    MISCOMPILE = "miscompile"  # a variant's compiled output disagrees with its own eager output
    SEED_MISCOMPILE = "seed-miscompile"  # the unmodified model's does
    COMPILE_CRASH = "compile-crash"
    RUN_CRASH = "run-crash"
    TIMEOUT = "timeout"  # compile hangs alone while eager runs fast
    DEVICE_MISMATCH = "device-mismatch"  # compiled CPU vs compiled CUDA of one variant
    CONFIG_MISMATCH = "config-mismatch"  # an Inductor configuration flips a verdict
    # notes
    UNSOUND_REWRITE = "unsound-rewrite"  # a variant's eager output differs from its seed's: a rule's fault
    NONDETERMINISTIC = "nondeterministic"  # two eager runs differ: not judged
    FLAKY = "flaky"  # a candidate that did not reproduce alone from its repro.py
    RESOURCE = "resource"  # a timeout or out-of-memory from size or load, not from the compiler
    SLOW_VARIANT = "slow-variant"
    SEED_ERROR = "seed-error"  # the model itself fails eagerly
    INTERNAL_ERROR = "internal-error"  # eqsat-test's own failure on a task
    SWEEP_EAGER_ERROR = "sweep-eager-error"
    SWEEP_UNCONFIRMED = "sweep-unconfirmed"
    SWEEP_ALSO_BASE = "sweep-also-base"

    def __str__(self) -> str:
        return self.value


COMPILER_BUG_KINDS = tuple(k.value for k in (
    FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE, FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH,
    FindingKind.TIMEOUT, FindingKind.DEVICE_MISMATCH, FindingKind.CONFIG_MISMATCH))
NOTE_KINDS = tuple(k.value for k in FindingKind if k.value not in COMPILER_BUG_KINDS)


def is_compiler_bug(kind: str) -> bool:
    return str(kind) in COMPILER_BUG_KINDS


class _Record:
    """JSON round trip for the dataclasses below: unknown keys are kept in `extra`, not lost."""

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        d = {k: (v.value if isinstance(v, Enum) else v) for k, v in d.items()}
        return {**getattr(self, "extra", {}), **d}

    @classmethod
    def from_dict(cls, d: dict):
        names = {f.name for f in dataclasses.fields(cls)}
        known = {k: v for k, v in d.items() if k in names and k != "extra"}
        rec = cls(**known)
        if "extra" in names:
            rec.extra = {k: v for k, v in d.items() if k not in names}
        return rec


class TaskKind(str, Enum):
    """What a worker task asks for; runners/exec/worker.py dispatches on it."""

    RUN = "run"  # one variant x backend x device on its input sets (the default)
    SWEEP = "sweep"  # the variant's dtype/size/dynamic sweep: runners/checks/sweep_run.py
    BATCH = "batch"  # K variants compiled as one program: runners/exec/batch.py
    WARMUP = "warmup"  # a spare worker's import + tiny compile, ahead of its tasks: runners/exec/pool.py

    def __str__(self) -> str:
        return self.value


@dataclass
class Task(_Record):
    """One variant x backend x device to run in a worker (runners/exec/worker.py)."""

    id: str
    variant: str
    file: str
    backend: str
    kind: str = TaskKind.RUN.value
    device: str = "cpu"
    seed: int = 0
    input_kinds: list = field(default_factory=lambda: ["given", "random", "special"])
    is_param: list | None = None
    save_eager: str | None = None  # folder for the eager outputs (the unsound-rewrite check reads them)
    save_compiled: str | None = None  # folder for compiled outputs and failing inputs
    save_outputs: bool = False  # keep every output (cross-device judging)
    perf: dict | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Finding(_Record):
    """A compiler-bug candidate or a note, as written to results.json, findings.jsonl and meta.json."""

    kind: str
    variant: str
    backend: str
    device: str
    graph: str | None = None
    rules: list = field(default_factory=list)
    detail: str = ""
    input_set: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def compiler_bug(self) -> bool:
        return is_compiler_bug(self.kind)


def exit_code_of(kinds, internal_errors: int = 0) -> ExitCode:
    """FOUND if any kind is a compiler bug, else INTERNAL if eqsat-test failed somewhere, else OK."""
    if any(is_compiler_bug(k) for k in kinds):
        return ExitCode.FOUND
    return ExitCode.INTERNAL if internal_errors else ExitCode.OK


def as_dict(rec: Any) -> dict:
    return rec.to_dict() if isinstance(rec, _Record) else dict(rec)

"""Exit codes and finding kinds: what a run ends with and what each finding or note is."""
from __future__ import annotations

from enum import Enum, IntEnum


class ExitCode(IntEnum):
    """Exit codes of every eqsat-test command, as pytest's."""

    OK = 0  # nothing found
    FOUND = 1  # compiler-bug candidates found
    INTERRUPTED = 2  # interrupted, or a budget ran out (run again to resume a campaign)
    INTERNAL = 3  # an internal error of eqsat-test
    USAGE = 4  # usage error or bad input (one line, no traceback)


class ValueEnum(str, Enum):
    """A str enum named by its values ("run-crash"), parsed with one clear error for an unknown string."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def _names(cls) -> tuple[str, str]:
        """How an error names a member and the members."""
        return "value", "values"

    @classmethod
    def parse(cls, value: str):
        """The member named by `value` (e.g. "run-crash"); a clear ValueError for any other string."""
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            one, many = cls._names()
            raise ValueError(f"unknown {one} {value!r}; known {many}: {', '.join(m.value for m in cls)}") from None


class FindingKind(ValueEnum):
    """What a finding or note is. Bug kinds (compiler bugs and eager bugs: PyTorch bugs either way) set exit
    code 1; notes never do."""

    MISCOMPILE = "miscompile"  # a variant's compiled output disagrees with its own eager output
    SEED_MISCOMPILE = "seed-miscompile"  # the unmodified model's does
    COMPILE_CRASH = "compile-crash"
    RUN_CRASH = "run-crash"
    TIMEOUT = "timeout"  # compile hangs alone while eager runs fast
    DEVICE_MISMATCH = "device-mismatch"  # compiled CPU vs compiled CUDA of one variant
    CONFIG_MISMATCH = "config-mismatch"  # an Inductor configuration flips a verdict
    GRAD_MISCOMPILE = "grad-miscompile"  # training mode: the forward outputs agree, a gradient does not
    # eager and compiled disagree and eager is the wrong side, by a reference that shares no kernel with
    # eager (runners/oracle/referee.py): a PyTorch bug filed against eager, not the compiler
    EAGER_BUG = "eager-bug"
    # eager is deterministic (two runs bit-equal), two calls of one compiled program on the same inputs are not,
    # and one of them is wrong: a stale or overwritten output, a race (runners/worker.py)
    COMPILED_NONDETERMINISTIC = "compiled-nondeterministic"
    CAPTURE_CRASH = "capture-crash"  # the model runs eagerly and torch.compile raises while Dynamo traces it
    # notes
    UNSOUND_REWRITE = "unsound-rewrite"  # a variant's eager output differs from its seed's: a rule's fault
    NONDETERMINISTIC = "nondeterministic"  # two eager runs differ: not judged
    FLAKY = "flaky"  # a candidate that did not reproduce alone from its repro.py
    RESOURCE = "resource"  # a timeout or out-of-memory from size or load, not from the compiler
    SLOW_VARIANT = "slow-variant"
    SEED_ERROR = "seed-error"  # the model itself fails eagerly
    INTERNAL_ERROR = "internal-error"  # eqsat-test's own failure on a task
    EMIT_ERROR = "emit-error"  # a program eqsat-test emitted wrongly (a tensor made on another device): its own failure
    SWEEP_EAGER_ERROR = "sweep-eager-error"
    SWEEP_UNCONFIRMED = "sweep-unconfirmed"
    SWEEP_ALSO_BASE = "sweep-also-base"

    @classmethod
    def _names(cls) -> tuple[str, str]:
        return "finding kind", "kinds"


# the compiler is at fault
COMPILER_BUG_KINDS = tuple(k.value for k in (
    FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE, FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH,
    FindingKind.TIMEOUT, FindingKind.DEVICE_MISMATCH, FindingKind.CONFIG_MISMATCH, FindingKind.GRAD_MISCOMPILE,
    FindingKind.COMPILED_NONDETERMINISTIC, FindingKind.CAPTURE_CRASH))
# PyTorch bugs, the compiler's or eager's: what sets exit code 1 and is a finding rather than a note
BUG_KINDS = COMPILER_BUG_KINDS + (FindingKind.EAGER_BUG.value,)
NOTE_KINDS = tuple(k.value for k in FindingKind if k.value not in BUG_KINDS)
KIND_VALUES = frozenset(k.value for k in FindingKind)


def is_compiler_bug(kind: str) -> bool:
    return str(kind) in COMPILER_BUG_KINDS


def is_bug(kind: str) -> bool:
    """A PyTorch bug of either side (compiler or eager): exit code 1."""
    return str(kind) in BUG_KINDS


def exit_code_of(kinds, internal_errors: int = 0) -> ExitCode:
    """FOUND if any kind is a bug (compiler or eager), else INTERNAL if eqsat-test failed somewhere, else OK."""
    if any(is_bug(k) for k in kinds):
        return ExitCode.FOUND
    return ExitCode.INTERNAL if internal_errors else ExitCode.OK

"""Typed records at the execution half's boundaries: exit codes, finding kinds, result statuses, tasks, results
and findings, with JSON round trips (kinds.py, finding.py; here: tasks, results and results.json)."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from eqsat_test.runners.records.finding import LOCAL_KEYS, Finding, as_finding, new_finding, replaced
from eqsat_test.runners.records.keyed import Keyed, as_dict, built_keys, fields_of
from eqsat_test.runners.records.kinds import (
    BUG_KINDS,
    COMPILER_BUG_KINDS,
    NOTE_KINDS,
    ExitCode,
    FindingKind,
    ValueEnum,
    exit_code_of,
    is_bug,
    is_compiler_bug,
)

__all__ = ["BUG_KINDS", "COMPILER_BUG_KINDS", "CRASH_STATUSES", "LOCAL_KEYS", "MINIMIZE_SECONDS", "NOTE_KINDS",
           "RESULTS_FILE", "RESULTS_SCHEMA_VERSION", "ExitCode", "Finding", "FindingKind", "InputSetVerdict", "Result",
           "ResultDraft", "ResultStatus", "RunResults", "Task", "TaskKind", "as_dict", "as_finding", "as_task",
           "exit_code_of", "is_bug", "is_compiler_bug", "new_finding", "replaced"]


class TaskKind(ValueEnum):
    """What a worker task asks for; runners/worker.py dispatches on it."""

    RUN = "run"  # one variant x backend x device on its input sets (the default)
    SWEEP = "sweep"  # the variant's dtype/size/dynamic sweep: runners/checks/sweep_run.py
    BATCH = "batch"  # K variants compiled as one program: runners/exec/batch.py
    WARMUP = "warmup"  # a spare worker's import + tiny compile, ahead of its tasks: runners/exec/pool.py
    REPRO = "repro"  # a finding's repro.py alone, with fresh compile state (a warm confirmation): runners/exec/alone.py


@dataclass(frozen=True, eq=False, repr=False)
class Task(Keyed):
    """One variant x backend x device to run in a worker (runners/worker.py), frozen: a stage that runs it
    otherwise makes a new one (`with_`). The worker protocol carries its dict (`to_dict`); the keys of
    other kinds of task (a sweep's "sweep", a batch's "batch", "timeout_s") are in `extra`. Built
    directly, its dict has `extra`'s keys, then every field."""

    id: str | None = None
    variant: str | None = None
    file: str | None = None
    backend: str | None = None
    kind: str = TaskKind.RUN.value
    device: str = "cpu"
    seed: int = 0
    input_kinds: list = field(default_factory=lambda: ["given", "random", "special"])
    is_param: list | None = None
    save_eager: str | None = None  # folder for the eager outputs (the unsound-rewrite check reads them)
    save_compiled: str | None = None  # folder for compiled outputs and failing inputs
    save_outputs: bool = False  # keep every output (cross-device judging)
    save_fp64: bool = False  # keep the fp64 run beside the eager outputs (a seed's: the unsound check's yardstick)
    perf: dict | None = None
    grad: bool = False  # training mode: forward and backward, gradients judged (runners/exec/training.py)
    coverage: str | None = None  # --coverage: the file for the compiler lines it reaches (runners/exec/compiler_lines.py)
    extra: Mapping[str, Any] = field(default_factory=dict)
    keys_: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.kind, Enum):
            object.__setattr__(self, "kind", self.kind.value)
        if not self.keys_:  # built directly
            fields = tuple(f.name for f in dataclasses.fields(self) if f.name in self._FIELDS)
            object.__setattr__(self, "keys_", tuple(k for k in self.extra if k not in fields) + fields)


Task._FIELDS = fields_of(Task)


def as_task(t: Mapping[str, Any]) -> Task:
    """A task as a record: a Task as is, a dict (the wire's, a test's) read by from_dict."""
    return t if isinstance(t, Task) else Task.from_dict(t)


class ResultStatus(ValueEnum):
    """How a worker task ended: a result's "status". Members compare equal to their strings."""

    OK = "ok"  # compiled and judged (its input sets say whether the outputs matched)
    EAGER_ERROR = "eager-error"  # the program itself fails (or dies, or hangs) in eager mode
    COMPILE_CRASH = "compile-crash"  # the first compiled call raised
    RUN_CRASH = "run-crash"  # a later compiled call raised
    TIMEOUT = "timeout"  # no result within the task's time (runners/exec/pool.py)
    PROCESS_CRASH = "process-crash"  # the worker process died after eager mode (runners/exec/pool.py)
    INTERNAL_ERROR = "internal-error"  # eqsat-test's own failure on the task

    @classmethod
    def _names(cls) -> tuple[str, str]:
        return "result status", "statuses"


CRASH_STATUSES = (ResultStatus.COMPILE_CRASH, ResultStatus.RUN_CRASH, ResultStatus.PROCESS_CRASH)

# The wall budget of a run's minimization (runners/findings/minimize.py): no check starts after it, and
# the smallest failing programs so far stand (`--minimize-seconds`; ExecOptions.minimize_seconds).
MINIMIZE_SECONDS = 120.0


@dataclass(frozen=True)
class InputSetVerdict:
    """One input set's verdict in a worker result (`Result.input_sets`): the oracle's judgement
    (oracle/verdict.py's Verdict, as its dict), what the worker adds to it, and a sweep point's labels.

    JSON: the judgement's keys always, every other field only where it is not None (a key a producer wrote as
    None reads back the same: None); `from_dict` refuses a key it does not know, so that a producer's new key
    (worker.py, exec/batch.py, checks/sweep_run.py) gets a field here."""

    name: str = ""  # the input set ("given", "random-0"; a sweep point's "dtype=float16/given")
    ok: bool = True  # agree (or set aside as nondeterministic)
    kind: str = "match"  # "match" | "mismatch" | "nondeterministic" | "structure-mismatch" | a sweep's crash kind
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    leaf: str | None = None  # the first failing output leaf
    detail: str = ""
    rules: list | None = None  # the oracle's rules that fired, per leaf (LeafRules dicts)
    failing: list | None = None  # the failing leaf's first failing elements (flat indices)
    # the worker's
    part: str | None = None  # training mode: "forward" | "gradient", of a failing verdict
    grad_input: str | None = None  # the input whose gradient failed
    grad_stage: str | None = None  # the backward's stage that first gets it wrong
    written_input: str | None = None  # a failing leaf that is an input the program writes
    referee: dict | None = None  # the independent referee's verdict (oracle/referee.py)
    inputs_digest: str | None = None  # the inputs' digest (cross-device judging compares them)
    inputs_file: str | None = None  # the failing inputs, saved
    warmup_file: str | None = None  # the calls before this set's, saved (a stale output needs them)
    # a sweep point's (checks/sweep_run.py)
    set: str | None = None  # the input set of the point ("given")
    sweep: str | None = None  # the point's label ("dtype=float16")
    sweep_key: str | None = None
    sweep_category: str | None = None
    sweep_dtype: str | None = None
    shapes: list | None = None
    confirmed: bool | None = None  # re-run alone after failing in a batch of points
    error: dict | None = None  # a crash's error
    compile_extra: dict | None = None  # torch.compile's options beyond the backend's (dynamic=True)

    # the judgement: the keys its JSON always has (verdicts.jsonl has these alone)
    JUDGEMENT: ClassVar[tuple[str, ...]] = ("name", "ok", "kind", "max_abs_err", "max_rel_err", "leaf", "detail")

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name in self.JUDGEMENT or getattr(self, f.name) is not None}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> InputSetVerdict:
        if isinstance(d, cls):
            return d
        unknown = set(d) - _INPUT_SET_FIELDS
        if unknown:
            raise TypeError(f"input set verdict: unknown key(s) {', '.join(sorted(unknown))}")
        return cls(**d)


_INPUT_SET_FIELDS = frozenset(f.name for f in dataclasses.fields(InputSetVerdict))


_RESULT_OMIT_IF_NONE = ("error", "input_set", "set_aside")


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class Result(Keyed):
    """A worker task's result, frozen: read from the worker protocol's dict (`from_dict`) on receipt, kept
    in results.json's "raw" (`to_dict`); the pool adds "elapsed" (and a lost task's "phase") with `with_`.

    `error`, `input_set` (the input set a failure happened on) and `set_aside` (input sets the program
    itself raises on in eager mode, not judged: name -> the error's first line) are no keys while None;
    `extra` holds the rest, after the fields: kernel files, dynamo stats, perf, compute dtype, the sweep
    summary, the pool's "elapsed" and "phase", a batch's "batch" ... (`r.get("elapsed")`). Built
    directly: the fields in order, then `extra`'s keys. The worker builds a ResultDraft and freezes it."""

    task: str = ""
    variant: str = ""
    backend: str = ""
    device: str = ""
    status: ResultStatus
    input_sets: tuple[InputSetVerdict, ...] = ()  # per input set, its verdict
    timings: dict = field(default_factory=dict)
    error: dict | None = None
    input_set: str | None = None
    set_aside: dict | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    keys_: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", ResultStatus.parse(self.status))
        object.__setattr__(self, "input_sets", tuple(InputSetVerdict.from_dict(v) for v in self.input_sets))
        if not self.keys_:  # built directly
            object.__setattr__(self, "keys_", built_keys(self, _RESULT_OMIT_IF_NONE))

    def to_dict(self) -> dict:
        d = super().to_dict()
        if "input_sets" in d:
            d["input_sets"] = [v.to_dict() for v in self.input_sets]
        return d

    @property
    def error_message(self) -> str:
        """The error's message ("" without one)."""
        return str((self.error or {}).get("message", ""))

    @property
    def is_sweep(self) -> bool:
        """A sweep task's result (its task id ends in "#sweep")."""
        return str(self.task or "").endswith("#sweep")


Result._FIELDS = fields_of(Result)


@dataclass
class ResultDraft:
    """A worker's result while it is made (runners/worker.py, a sweep's, a batch's): mutable, with
    Result's fields; `freeze()` is the Result."""

    task: str | None
    variant: str | None
    backend: str | None
    device: str | None
    status: ResultStatus
    input_sets: list = field(default_factory=list)  # the verdicts' dicts as they are made (InputSetVerdict's keys)
    timings: dict = field(default_factory=dict)
    error: dict | None = None
    input_set: str | None = None
    set_aside: dict | None = None
    extra: dict = field(default_factory=dict)

    def freeze(self) -> Result:
        return Result(**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


# ----------------------------------------------------------------------------------------------
# OUT/results.json

# The version of results.json's layout: 1 is the first that says it ({"schema_version": 1, "report": ...,
# "raw": ...}); a file without it (written before) reads as the same layout. Bump it when a key changes meaning.
RESULTS_SCHEMA_VERSION = 1
RESULTS_FILE = "results.json"


@dataclass(frozen=True)
class RunResults:
    """OUT/results.json as records: `report` (the CLI's --json object) with its `findings` (every finding
    and note) as Finding records, and `raw`, every worker result as a Result.

    Layout, version 1 (`schema_version`; None: a file written before versions, the same layout):
      report: {clusters: [Cluster.to_dict()], note_groups: [NoteGroup.to_dict()], model, torch_version,
               variants, executed, sizes, partial, findings: [Finding.to_dict()], stats: {...}}
      raw: [Result.to_dict()]
    `from_dict(d).to_dict() == d`, keys in d's order."""

    report: Mapping[str, Any]  # without "findings": the findings are `findings`
    findings: tuple[Finding, ...]
    raw: tuple[Result, ...]
    schema_version: int | None = RESULTS_SCHEMA_VERSION

    def to_dict(self) -> dict:
        """The file's object; the findings go where the report has its "findings" key, last where it has none."""
        findings = [f.to_dict() for f in self.findings]
        report = {k: (findings if k == "findings" else v) for k, v in self.report.items()}
        report.setdefault("findings", findings)
        head = {} if self.schema_version is None else {"schema_version": self.schema_version}
        return {**head, "report": report, "raw": [r.to_dict() for r in self.raw]}

    def report_dict(self) -> dict:
        """The report with its findings: report.json's object and the CLI's --json one."""
        return self.to_dict()["report"]

    def to_json(self) -> str:
        """results.json's text."""
        return json.dumps(self.to_dict(), indent=1, default=str)

    @classmethod
    def from_json(cls, text: str) -> RunResults:
        """results.json's text, of any version up to RESULTS_SCHEMA_VERSION, as records."""
        return cls.from_dict(json.loads(text))

    def write(self, out: Path) -> Path:
        """OUT/results.json, replaced whole (written beside it first: a reader never sees half a file)."""
        tmp = Path(out) / (RESULTS_FILE + ".tmp")
        tmp.write_text(self.to_json())
        return tmp.replace(Path(out) / RESULTS_FILE)

    @classmethod
    def read(cls, out: Path) -> RunResults:
        """OUT/results.json as records."""
        return cls.from_json((Path(out) / RESULTS_FILE).read_text())

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunResults:
        version = d.get("schema_version")
        if version is not None and (not isinstance(version, int) or version > RESULTS_SCHEMA_VERSION):
            raise ValueError(f"results.json schema version {version!r}: this eqsat-test reads versions up to "
                             f"{RESULTS_SCHEMA_VERSION}")
        report = dict(d["report"])
        findings = tuple(Finding.from_dict(f) for f in report.get("findings") or [])
        report.setdefault("findings", [])
        return cls(report=report, findings=findings, raw=tuple(Result.from_dict(r) for r in d.get("raw") or []),
                   schema_version=version)

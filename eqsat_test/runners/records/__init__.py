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

from eqsat_test.runners.records.finding import LOCAL_KEYS, Finding, as_finding, new_finding, replaced, split_more
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
           "ResultDraft", "ResultStatus", "RunResults", "Task", "TaskKind", "as_finding", "exit_code_of", "is_bug",
           "is_compiler_bug", "new_finding", "replaced"]



def _known_keys(d: Mapping[str, Any], fields: frozenset | set, what: str) -> Mapping[str, Any]:
    """d itself when every key is a field; a key no field holds is refused by name (a producer's new key gets a
    field)."""
    unknown = set(d) - set(fields)
    if unknown:
        raise TypeError(f"{what}: unknown key(s) {', '.join(sorted(unknown))}")
    return d

class TaskKind(ValueEnum):
    """What a worker task asks for; runners/worker.py dispatches on it."""

    RUN = "run"  # one variant x backend x device on its input sets (the default)
    SWEEP = "sweep"  # the variant's dtype/size/dynamic sweep: runners/checks/sweep_run.py
    BATCH = "batch"  # K variants compiled as one program: runners/exec/batch.py
    WARMUP = "warmup"  # a spare worker's import + tiny compile, ahead of its tasks: runners/exec/pool.py
    REPRO = "repro"  # a finding's repro.py alone, with fresh compile state (a warm confirmation): runners/exec/alone.py


@dataclass(frozen=True, repr=False)
class Task:
    """One variant x backend x device to run in a worker (runners/worker.py), frozen: a stage that runs it
    otherwise makes a new one (`with_`). The worker protocol carries its dict (`to_dict`), read back once by the
    worker (`from_dict`). Other kinds of task than a plain run have fields of their own: a sweep's `sweep`, a
    batch's `batch` and `group`, a repro's `folder`; `timeout_s` is the pool's time for it where not the run's."""

    id: str = ""
    variant: str = ""
    file: str = ""  # the variant's program (runners/protocol.py's load_module)
    backend: str = ""
    kind: TaskKind = TaskKind.RUN
    device: str = "cpu"
    seed: int = 0
    input_kinds: list = field(default_factory=lambda: ["given", "random", "special"])
    is_param: list | None = None
    save_eager: str | None = None  # folder for the eager outputs (the unsound-rewrite check reads them)
    save_compiled: str | None = None  # folder for compiled outputs and failing inputs
    save_outputs: bool = False  # keep every output (cross-device judging)
    save_fp64: bool = False  # keep the fp64 run beside the eager outputs (a seed's: the unsound check's yardstick)
    perf: dict | None = None  # time the compiled and eager program ({"budget": seconds}: runners/checks/perf.py)
    grad: bool = False  # training mode: forward and backward, gradients judged (runners/exec/training.py)
    coverage: str | None = None  # --coverage: the file for the compiler lines it reaches (runners/exec/compiler_lines.py)
    # the fields of other kinds of task: no keys while unset
    sweep: dict | None = None  # kind sweep: its SweepConfig's dict (runners/checks/sweep_plan.py)
    batch: tuple[Task, ...] = ()  # kind batch: the tasks of the variants it compiles as one program
    group: str | None = None  # kind batch: the batching group of its variants (runners/exec/batch.py)
    folder: str | None = None  # kind repro: the finding folder whose repro.py it runs (runners/exec/alone.py)
    timeout_s: float | None = None  # the pool's time for it (a batch's: longer); None: the run's timeout

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", TaskKind.parse(self.kind))
        object.__setattr__(self, "batch", tuple(Task.from_dict(t) for t in self.batch))

    def to_dict(self) -> dict:
        """The wire's object: every field, in order, but those of other kinds of task while unset."""
        d: dict = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name in _TASK_OMIT_IF_UNSET and v in (None, ()):
                continue
            d[f.name] = v.value if isinstance(v, Enum) else [t.to_dict() for t in v] if f.name == "batch" else v
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Task:
        """A task's wire object; a key no field holds is refused by name (a producer's new key gets a field)."""
        return d if isinstance(d, cls) else cls(**_known_keys(d, _TASK_FIELDS, "task"))

    def with_(self, **changes: Any) -> Task:
        """A new task with these fields set."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return f"Task({self.to_dict()!r})"


_TASK_FIELDS = frozenset(f.name for f in dataclasses.fields(Task))
_TASK_OMIT_IF_UNSET = ("sweep", "batch", "group", "folder", "timeout_s")


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
        return d if isinstance(d, cls) else cls(**_known_keys(d, _INPUT_SET_FIELDS, "input set verdict"))


_INPUT_SET_FIELDS = frozenset(f.name for f in dataclasses.fields(InputSetVerdict))


@dataclass(frozen=True, kw_only=True, repr=False)
class Result:
    """A worker task's result, frozen: read from the worker protocol's dict (`from_dict`) on receipt, kept
    in results.json's "raw" (`to_dict`); the pool adds `elapsed` (and a lost task's `phase`) with `with_`.
    The worker builds a ResultDraft and freezes it.

    JSON: the fields from `task` to `timings` always; every later field only where it is not None (a key written
    as null reads back the same: None); then `more`, the keys of an older or newer producer that no field
    holds, kept as read."""

    task: str = ""
    variant: str = ""
    backend: str = ""
    device: str = ""
    status: ResultStatus
    input_sets: tuple[InputSetVerdict, ...] = ()  # per input set, its verdict
    timings: dict = field(default_factory=dict)  # seconds per phase: load, eager, compile, run (a sweep's: sweep)
    error: dict | None = None  # protocol.error_info's dict
    input_set: str | None = None  # the input set a failure happened on
    set_aside: dict | None = None  # input sets the program itself raises on eagerly, not judged: name -> its error
    # the worker's (runners/worker.py)
    file: str | None = None  # a task that keeps every output (cross-device judging): its program,
    seed: int | None = None  # its inputs' seed
    save_compiled: str | None = None  # and the folder of its outputs (runners/checks/devices.py reads them)
    training: dict | None = None  # training mode: {"random", "not_differentiated"} (runners/exec/training.py)
    compute_dtype: str | None = None  # the dtype eager computes in where it is not the inputs' (oracle/reference.py)
    writes: list | None = None  # the inputs the program writes
    referee: dict | None = None  # a crash's referee verdict (oracle/referee.py)
    kernel_files: list | None = None  # Inductor's generated code files (checks/devices.py's KernelRecorder)
    kernel_source_file: str | None = None  # a failing task's kernels, kept beside its outputs
    dynamo: dict | None = None  # graph breaks, unique graphs and recompiles
    perf: dict | None = None  # compiled and eager timing (runners/checks/perf.py)
    perf_error: dict | None = None  # the timing's error
    sweep_task: bool | None = None  # a sweep task's (runners/checks/sweep_run.py)
    sweep: dict | None = None  # a sweep's summary
    batch: dict | None = None  # a batch's: its stats; a variant cleared in a batch: {"id", "size"} of the batch
    batch_results: tuple[Result | None, ...] | None = None  # a batch's: its variants' results (None: run alone); `batch.suspect`: a set failed
    repro: dict | None = None  # a repro task's: {"rc", "output", "seconds"} (runners/exec/alone.py)
    compiler_lines: dict | None = None  # --coverage: {"file", "lines", "backend"} (runners/exec/compiler_lines.py)
    cuda_context_lost: str | None = None  # the error that left the worker's CUDA context unusable
    # the pool's (runners/exec/pool.py)
    phase: str | None = None  # what a task whose worker hung or died was doing
    elapsed: float | None = None  # seconds, as the pool measured them
    more: Mapping[str, Any] = field(default_factory=dict)  # keys no field holds: open-ended, as read

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", ResultStatus.parse(self.status))
        object.__setattr__(self, "input_sets", tuple(InputSetVerdict.from_dict(v) for v in self.input_sets))
        if self.batch_results is not None:
            object.__setattr__(self, "batch_results", tuple(
                None if r is None else Result.from_dict(r) for r in self.batch_results))

    def to_dict(self) -> dict:
        """Its JSON object: the fields in order (the later ones only where not None), then `more`'s keys."""
        d: dict = {}
        for name in _RESULT_FIELDS:
            v = getattr(self, name)
            if v is None and name not in _RESULT_ALWAYS:
                continue
            d[name] = (v.value if isinstance(v, Enum) else [s.to_dict() for s in v] if name == "input_sets" else
                       [None if r is None else r.to_dict() for r in v] if name == "batch_results" else v)
        return {**d, **{k: v for k, v in self.more.items() if k not in d}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        """A result's JSON object (the wire's, results.json's of any version: a key no field holds goes to `more`)."""
        return d if isinstance(d, cls) else cls(**split_more(d, _RESULT_FIELDS))

    def with_(self, **changes: Any) -> Result:
        """A new result with these fields set."""
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        return f"Result({self.to_dict()!r})"

    @property
    def error_message(self) -> str:
        """The error's message ("" without one)."""
        return str((self.error or {}).get("message", ""))

    @property
    def is_sweep(self) -> bool:
        """A sweep task's result (its task id ends in "#sweep")."""
        return str(self.task or "").endswith("#sweep")


_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(Result) if f.name != "more")
_RESULT_ALWAYS = ("task", "variant", "backend", "device", "status", "input_sets", "timings")


@dataclass
class ResultDraft:
    """A worker's result while it is made (runners/worker.py, a sweep's): mutable, with the fields of Result
    that the worker sets; `freeze()` is the Result."""

    task: str
    variant: str
    backend: str
    device: str
    status: ResultStatus
    input_sets: list = field(default_factory=list)  # the verdicts' dicts as they are made (InputSetVerdict's keys)
    timings: dict = field(default_factory=dict)
    error: dict | None = None
    input_set: str | None = None
    set_aside: dict | None = None
    file: str | None = None
    seed: int | None = None
    save_compiled: str | None = None
    training: dict | None = None
    compute_dtype: str | None = None
    writes: list | None = None
    referee: dict | None = None
    kernel_files: list | None = None
    kernel_source_file: str | None = None
    dynamo: dict | None = None
    perf: dict | None = None
    perf_error: dict | None = None
    sweep_task: bool | None = None
    sweep: dict | None = None

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
    `from_dict(d).to_dict() == d`, keys in d's order, for a file this eqsat-test writes (a raw result's key that
    an older one wrote as null is left out; one no field holds comes after the fields: Result.to_dict)."""

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

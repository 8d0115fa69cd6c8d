"""Typed records at the execution half's boundaries: exit codes, finding kinds, result statuses, tasks, results
and findings, with JSON round trips."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from pathlib import Path
from typing import Any, ClassVar


class ExitCode(IntEnum):
    """Exit codes of every eqsat-test command, as pytest's."""

    OK = 0  # nothing found
    FOUND = 1  # compiler-bug candidates found
    INTERRUPTED = 2  # interrupted, or a budget ran out (run again to resume a campaign)
    INTERNAL = 3  # an internal error of eqsat-test
    USAGE = 4  # usage error or bad input (one line, no traceback)


class _ValueEnum(str, Enum):
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


class FindingKind(_ValueEnum):
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
_KIND_VALUES = frozenset(k.value for k in FindingKind)


def is_compiler_bug(kind: str) -> bool:
    return str(kind) in COMPILER_BUG_KINDS


def is_bug(kind: str) -> bool:
    """A PyTorch bug of either side (compiler or eager): exit code 1."""
    return str(kind) in BUG_KINDS


class _Keyed(Mapping):
    """A frozen record that is also the read-only mapping of its JSON keys (Finding, Result, Task).

    Its common keys are fields, the rest are in `extra`; `keys_` is the keys' order, the order its dict
    has (a field the dict lacks is no key and reads as its default). `r["key"]`, `"key" in r`, `{**r}`
    read that dict; `to_dict()` is it, `from_dict(d)` reads one back (`from_dict(d).to_dict() == d`,
    keys in d's order); `with_`/`without` make new records (as `d[k] = v` and `del d[k]`: a new key
    comes last)."""

    _FIELDS: ClassVar[frozenset[str]] = frozenset()
    extra: Mapping[str, Any]
    keys_: tuple[str, ...]

    def __getitem__(self, key: str) -> Any:
        if key not in self.keys_:
            raise KeyError(key)
        return getattr(self, key) if key in self._FIELDS else self.extra[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_)

    def __len__(self) -> int:
        return len(self.keys_)

    def __contains__(self, key: object) -> bool:
        return key in self.keys_

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"

    def to_dict(self) -> dict:
        """The record's JSON form: its keys in order, enum values as their strings."""
        return {k: (v.value if isinstance(v, Enum) else v) for k, v in ((k, self[k]) for k in self.keys_)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]):
        if isinstance(d, cls):
            return d
        known = {k: v for k, v in d.items() if k in cls._FIELDS}
        make: Any = cls  # (a subclass: a dataclass with `extra` and `keys_`)
        return make(**known, extra={k: v for k, v in d.items() if k not in cls._FIELDS}, keys_=tuple(d))

    def with_(self, **changes: Any):
        """A new record with these keys set (as `d[k] = v`: a new key comes last)."""
        known = {k: v for k, v in changes.items() if k in self._FIELDS}
        other = {k: v for k, v in changes.items() if k not in self._FIELDS}
        keys = self.keys_ + tuple(k for k in changes if k not in self.keys_)
        return dataclasses.replace(self, **known, extra={**self.extra, **other} if other else self.extra,  # type: ignore[type-var]
                                   keys_=keys)

    def without(self, *keys: str):
        """A new record without these keys (a field goes back to its default)."""
        gone = set(keys)
        defaults = _defaults(type(self))
        return dataclasses.replace(self, **{k: defaults.get(k) for k in gone if k in self._FIELDS},  # type: ignore[type-var]
                                   extra={k: v for k, v in self.extra.items() if k not in gone},
                                   keys_=tuple(k for k in self.keys_ if k not in gone))


def _fields_of(cls) -> frozenset[str]:
    """A record's fields that are JSON keys (all but `extra` and `keys_`)."""
    return frozenset(f.name for f in dataclasses.fields(cls)) - {"extra", "keys_"}


def _built_keys(rec: _Keyed, omit_if_none: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The keys of a record built directly (not read by from_dict): its fields in order (those of
    `omit_if_none` only once set), then `extra`'s keys."""
    names = [f.name for f in dataclasses.fields(rec)  # type: ignore[arg-type]
             if f.name in rec._FIELDS and not (f.name in omit_if_none and getattr(rec, f.name) is None)]
    return tuple(names) + tuple(k for k in rec.extra if k not in names)


def _defaults(cls) -> dict:
    """A dataclass's fields that have defaults, with their default values."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


class TaskKind(_ValueEnum):
    """What a worker task asks for; runners/worker.py dispatches on it."""

    RUN = "run"  # one variant x backend x device on its input sets (the default)
    SWEEP = "sweep"  # the variant's dtype/size/dynamic sweep: runners/checks/sweep_run.py
    BATCH = "batch"  # K variants compiled as one program: runners/exec/batch.py
    WARMUP = "warmup"  # a spare worker's import + tiny compile, ahead of its tasks: runners/exec/pool.py
    REPRO = "repro"  # a finding's repro.py alone, with fresh compile state (a warm confirmation): runners/exec/alone.py


@dataclass(frozen=True, eq=False, repr=False)
class Task(_Keyed):
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


Task._FIELDS = _fields_of(Task)


def as_task(t: Mapping[str, Any]) -> Task:
    """A task as a record: a Task as is, a dict (the wire's, a test's) read by from_dict."""
    return t if isinstance(t, Task) else Task.from_dict(t)


class ResultStatus(_ValueEnum):
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
class Result(_Keyed):
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
            object.__setattr__(self, "keys_", _built_keys(self, _RESULT_OMIT_IF_NONE))

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


Result._FIELDS = _fields_of(Result)


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


@dataclass(frozen=True, eq=False, repr=False)
class Finding(_Keyed):
    """A compiler-bug candidate or a note, frozen from new_finding to results.json, findings.jsonl and meta.json.

    Its common keys are fields (a key the finding lacks reads None); the rest are in `extra`. `keys_`
    is the keys' order, the order results.json has always had: the parts' keys, "kind", the fields
    given, then what later stages added (`with_`). Read-only mapping access (`f["detail"]`, `"error"
    in f`, `{**f}`) reads what its dict has; `to_dict()` is that dict, `from_dict` reads one back."""

    kind: str
    variant: str | None = None
    graph: str | None = None
    backend: str | None = None
    device: str | None = None
    rules: list | None = None
    mode: str | None = None
    ops: list | None = None
    seed: bool | None = None
    input_set: str | None = None
    detail: str | None = None
    error: dict | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    leaf: Any = None
    failing_inputs: str | None = None  # the failing input set's file (minimization points it at the smaller one's)
    referee: dict | None = None  # the independent referee's verdict (runners/oracle/referee.py)
    sweep: str | None = None
    sweep_key: str | None = None
    cone_ops: list | None = None  # the ops the failing output depends on (runners/findings/clusters.py)
    input_dtypes: list | None = None
    dynamo: dict | None = None
    triage: str | None = None
    triage_info: dict | None = None
    id: str | None = None  # the finding's folder name, once written
    repro: str | None = None
    signature: str | None = None
    confirmed: bool | None = None  # re-run alone from its repro.py (runners/findings/confirm.py)
    claimed_kind: str | None = None
    confirmation: dict | None = None
    cluster: str | None = None  # its root cause's key, and the ledger entry it matches ("known")
    known: str | None = None
    min_ops: list | None = None  # minimization (runners/findings/minimize.py)
    min_checks: int | None = None
    min_skipped: str | None = None
    minimized_file: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    keys_: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.kind, Enum):  # written as its string, as results.json has it
            object.__setattr__(self, "kind", self.kind.value)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        return super().from_dict(d)

    def with_(self, **changes: Any) -> Finding:
        return super().with_(**changes)

    def without(self, *keys: str) -> Finding:
        return super().without(*keys)

    def public(self) -> Finding:
        """The finding as reported (results.json, --json, verdicts.jsonl, meta.json): without the local scratch
        paths and the debug files' texts (files of its folder)."""
        return self.without(*LOCAL_KEYS)

    @property
    def compiler_bug(self) -> bool:
        return is_compiler_bug(self.kind)

    @property
    def bug(self) -> bool:
        return is_bug(self.kind)


Finding._FIELDS = _fields_of(Finding)
# a finding's keys that stay on this host: the failing inputs' and minimized program's scratch files, the debug
# files' texts (written into its folder)
LOCAL_KEYS = ("failing_inputs", "minimized_file", "artifacts")


def as_finding(f: Mapping[str, Any]) -> Finding:
    """A finding as a record: a Finding as is, a dict (an old results.json's, a test's) read by from_dict."""
    return f if isinstance(f, Finding) else Finding.from_dict(f)


def replaced(records: list, old: list, new: list) -> list:
    """`records` with each of `old` (records of it, by identity) replaced by the `new` at its position."""
    swap = {id(o): n for o, n in zip(old, new, strict=True)}
    return [swap.get(id(r), r) for r in records]


def new_finding(kind: FindingKind, *parts: Mapping, **fields) -> Finding:
    """The one constructor of findings and notes: the record of `{**parts..., "kind": kind.value, **fields}`.

    `kind` must be a FindingKind member (a plain string, even a known one, is refused: parse it with
    FindingKind.parse first). Its keys come in the order that results.json, findings.jsonl and
    meta.json have always had: the parts' keys first, then "kind", then `fields`; a field that a part
    has already keeps the part's position and takes the field's value, as in a dict literal. Later
    stages make new records from it (`Finding.with_`)."""
    if not isinstance(kind, FindingKind):
        if isinstance(kind, str) and kind in _KIND_VALUES:
            raise TypeError(f"finding kind {kind!r} is a plain string: pass FindingKind.parse({kind!r}) "
                            f"or a FindingKind member")
        raise ValueError(f"unknown finding kind {kind!r}; known kinds: {', '.join(sorted(_KIND_VALUES))}")
    d: dict = {}
    for p in parts:
        d.update(p)
    d["kind"] = kind.value
    d.update(fields)
    return Finding.from_dict(d)


def exit_code_of(kinds, internal_errors: int = 0) -> ExitCode:
    """FOUND if any kind is a bug (compiler or eager), else INTERNAL if eqsat-test failed somewhere, else OK."""
    if any(is_bug(k) for k in kinds):
        return ExitCode.FOUND
    return ExitCode.INTERNAL if internal_errors else ExitCode.OK


def as_dict(rec: Any) -> dict:
    """A record's dict (`to_dict`), or a dict as is."""
    return rec.to_dict() if isinstance(rec, _Keyed) else dict(rec)


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

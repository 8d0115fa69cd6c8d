"""The Finding record: a compiler-bug candidate or a note, from new_finding to results.json and meta.json."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from eqsat_test.runners.records.keyed import Keyed, fields_of
from eqsat_test.runners.records.kinds import KIND_VALUES, FindingKind, is_bug, is_compiler_bug


@dataclass(frozen=True, eq=False, repr=False)
class Finding(Keyed):
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
    min_detail: str | None = None  # the minimized program's own verdict, and the input set it failed on
    min_input_set: str | None = None
    min_steps: list | None = None  # the minimization's steps
    # training mode (runners/exec/training.py): its repro runs forward and backward
    grad: bool | None = None
    not_differentiated: list | None = None  # inputs no gradient is taken of
    grad_input: str | None = None  # the input whose gradient failed
    grad_stage: str | None = None  # the backward's stage that first gets it wrong
    written_input: str | None = None  # a failing leaf that is an input the program writes
    warmup_file: str | None = None  # the calls before the failing one, saved (a stale output needs them)
    # a sweep point's (runners/checks/sweeps.py)
    sweep_dtype: str | None = None
    shapes: list | None = None
    sweep_also_seen: list | None = None  # the other points and variants that failed alike
    compile_extra: dict | None = None  # torch.compile's options beyond the backend's (dynamic=True)
    # root causes (runners/findings/rootcause.py): the sightings one finding stands for
    count: int | None = None
    also_seen_in: list | None = None
    variants_failing_alike: list | None = None
    # the referee (runners/oracle/referee.py)
    judged_kind: str | None = None  # the kind judged before the referee named eager the wrong side
    referee_line: str | None = None  # its verdict in one line
    # across devices (runners/checks/devices.py)
    other_device: str | None = None
    odd_input_sets: list | None = None
    same_device_verdict: str | None = None
    cross_device: dict | None = None  # a same-device finding's comparison with the other device
    kernel_files: list | None = None  # Inductor's generated code, where it left it
    kernel_source_file: str | None = None
    # across Inductor configurations (runners/checks/configs.py)
    base_backend: str | None = None
    config: str | None = None
    config_overrides: dict | None = None
    direction: str | None = None  # "exposed-by-config" | "hidden-by-config"
    configs_right: list | None = None
    configs_wrong: list | None = None
    config_dependent: bool | None = None
    configs_also_wrong: list | None = None
    # a slow-variant note (runners/checks/perf.py)
    baseline: str | None = None
    baseline_rules: list | None = None
    ratio: float | None = None
    eager_ratio: float | None = None
    compiled_us: float | None = None
    baseline_us: float | None = None
    screen_ratio: float | None = None
    group_us: float | None = None
    attribution: str | None = None  # "compiler" | "program"
    threshold: float | None = None
    min_abs_us: float | None = None
    threads: int | None = None
    folder: str | None = None
    # debug artifacts (runners/findings/artifacts.py): the files' texts, and what the steps made
    artifacts: dict | None = None
    debug_artifacts: dict | None = None
    unconfirmed: bool | None = None  # judged by an interrupted run, not confirmed
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


Finding._FIELDS = fields_of(Finding)
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
        if isinstance(kind, str) and kind in KIND_VALUES:
            raise TypeError(f"finding kind {kind!r} is a plain string: pass FindingKind.parse({kind!r}) "
                            f"or a FindingKind member")
        raise ValueError(f"unknown finding kind {kind!r}; known kinds: {', '.join(sorted(KIND_VALUES))}")
    d: dict = {}
    for p in parts:
        d.update(p)
    d["kind"] = kind.value
    d.update(fields)
    return Finding.from_dict(d)

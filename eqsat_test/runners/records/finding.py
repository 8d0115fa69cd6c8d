"""The Finding record: a compiler-bug candidate or a note, from new_finding to results.json and meta.json."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from eqsat_test.runners.records.kinds import KIND_VALUES, FindingKind, is_bug, is_compiler_bug


@dataclass(frozen=True, eq=False)
class Finding:
    """A compiler-bug candidate or a note, frozen from new_finding to results.json, findings.jsonl and meta.json.

    Every key a stage reads is a field (None: not known, and no key of its JSON); `more` holds the keys no field
    names (an older file's, a custom backend's), kept as read. `to_dict()` is its JSON object (the fields in
    order, those not None, then `more`'s keys), `from_dict` reads one back; later stages make new records
    (`with_`, `without`)."""

    variant: str | None = None
    graph: str | None = None
    backend: str | None = None
    device: str | None = None
    rules: list | None = None
    mode: str | None = None
    ops: list | None = None
    seed: bool | None = None
    kind: str = ""
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
    more: Mapping[str, Any] = field(default_factory=dict)  # keys no field names: open-ended, as read

    def __post_init__(self) -> None:
        if isinstance(self.kind, Enum):  # written as its string, as results.json has it
            object.__setattr__(self, "kind", self.kind.value)

    def to_dict(self) -> dict:
        """Its JSON object: the fields that are not None, in order, then `more`'s keys."""
        d = {name: getattr(self, name) for name in _FIELDS if getattr(self, name) is not None}
        return {**d, **{k: v for k, v in self.more.items() if k not in d}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        """A finding's JSON object (of any version: a key no field names goes to `more`)."""
        return d if isinstance(d, cls) else cls(**split_more(d, _FIELDS))

    def with_(self, **changes: Any) -> Finding:
        """A new record with these fields set (a name no field has is refused: give it a field)."""
        unknown = set(changes) - set(_FIELDS)
        if unknown:
            raise TypeError(f"Finding has no field {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)

    def without(self, *keys: str) -> Finding:
        """A new record with these fields unset (None) and these keys of `more` gone."""
        unset: dict[str, Any] = {k: None for k in keys if k in _FIELDS}
        return dataclasses.replace(self, **unset, more={k: v for k, v in self.more.items() if k not in keys})

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


_FIELDS = tuple(f.name for f in dataclasses.fields(Finding) if f.name != "more")
# a finding's keys that stay on this host: the failing inputs' and minimized program's scratch files, the debug
# files' texts (written into its folder)
LOCAL_KEYS = ("failing_inputs", "minimized_file", "artifacts")


def as_finding(f: Finding | Mapping[str, Any]) -> Finding:
    """A finding as a record: a Finding as is, a dict (an old results.json's, a test's) read by from_dict."""
    return f if isinstance(f, Finding) else Finding.from_dict(f)


def replaced(records: list, old: list, new: list) -> list:
    """`records` with each of `old` (records of it, by identity) replaced by the `new` at its position."""
    swap = {id(o): n for o, n in zip(old, new, strict=True)}
    return [swap.get(id(r), r) for r in records]


def new_finding(kind: FindingKind, *parts: Mapping, **fields) -> Finding:
    """The one constructor of findings and notes: the record of `{**parts..., "kind": kind.value, **fields}`.

    `kind` must be a FindingKind member (a plain string, even a known one, is refused: parse it with
    FindingKind.parse first); a key no field names is refused (give it a field). A later part or field
    wins, as in a dict literal. Later stages make new records from it (`Finding.with_`)."""
    if not isinstance(kind, FindingKind):
        if isinstance(kind, str) and kind in KIND_VALUES:
            raise TypeError(f"finding kind {kind!r} is a plain string: pass FindingKind.parse({kind!r}) "
                            f"or a FindingKind member")
        raise ValueError(f"unknown finding kind {kind!r}; known kinds: {', '.join(sorted(KIND_VALUES))}")
    d: dict = {}
    for p in parts:
        d.update(p)
    d.update(fields, kind=kind.value)
    unknown = set(d) - set(_FIELDS)
    if unknown:
        raise TypeError(f"Finding has no field {', '.join(sorted(unknown))}")
    return Finding(**d)


def split_more(d: Mapping[str, Any], fields) -> dict:
    """A record's constructor arguments from its JSON object: the keys a field holds, the rest in `more`."""
    return {**{k: v for k, v in d.items() if k in fields}, "more": {k: v for k, v in d.items() if k not in fields}}

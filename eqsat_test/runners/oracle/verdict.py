"""The oracle's verdict record and its rule counts: which named rules (rules.py) convicted, cleared or noted how many elements of which leaf."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MATCH = "match"
MISMATCH = "mismatch"
NONDETERMINISTIC = "nondeterministic"
STRUCTURE_MISMATCH = "structure-mismatch"


@dataclass(frozen=True)
class RuleCount:
    """How many elements one rule convicted, cleared or noted."""

    rule: str  # an id of rules.RULES
    count: int

    def to_dict(self) -> dict:
        return {"rule": self.rule, "count": self.count}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RuleCount:
        return cls(str(d["rule"]), int(d["count"]))


@dataclass(frozen=True)
class LeafRules:
    """The rules that fired on one leaf of an output ("" for a bare tensor), in the order they applied."""

    leaf: str
    counts: tuple[RuleCount, ...]

    def to_dict(self) -> dict:
        return {"leaf": self.leaf, "counts": {c.rule: c.count for c in self.counts}}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LeafRules:
        return cls(str(d["leaf"]), tuple(RuleCount(str(k), int(v)) for k, v in (d.get("counts") or {}).items()))


@dataclass(frozen=True)
class Verdict:
    """One judgement of a program's compiled output against its eager output."""

    ok: bool  # True: agree (or set aside as nondeterministic)
    kind: str  # "match" | "mismatch" | "nondeterministic" | "structure-mismatch"
    max_abs_err: float  # max |compiled - eager| over all leaves; inf where NaN/inf positions differ
    max_rel_err: float  # |compiled - eager| / |eager| over finite positions where eager != 0
    leaf: str | None  # path of the first failing leaf, like "[0]['logits'][1]"; None if ok
    detail: str  # one human-readable line: the first failing element with eager, compiled, fp64
    rules: tuple[LeafRules, ...] = ()  # per leaf, the rules that fired and their counts
    failing: tuple[int, ...] = ()  # the failing leaf's first failing elements (flat indices); () where not elementwise

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("rules", "failing")}
        d["rules"] = [r.to_dict() for r in self.rules]
        d["failing"] = list(self.failing)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        return cls(bool(d["ok"]), str(d["kind"]), float(d["max_abs_err"]), float(d["max_rel_err"]), d.get("leaf"),
                   str(d["detail"]), tuple(LeafRules.from_dict(r) for r in d.get("rules") or ()),
                   tuple(int(k) for k in d.get("failing") or ()))

    def totals(self) -> dict[str, int]:
        """Rule id -> elements, summed over the leaves."""
        return rule_totals([self.to_dict()])

    def with_counts(self, leaf: str, counts: Iterable[RuleCount]) -> Verdict:
        """This verdict with more counts for one leaf (after the leaf's own)."""
        return dataclasses.replace(self, rules=merge_counts(self.rules, [LeafRules(leaf, tuple(counts))]))


def merge_counts(first: Iterable[LeafRules], more: Iterable[LeafRules]) -> tuple[LeafRules, ...]:
    """Leaves' counts of `first`, then `more`'s appended to the same leaf's (a new leaf after the rest)."""
    out: dict[str, list[RuleCount]] = {}
    for lr in [*first, *more]:
        if lr.counts:
            out.setdefault(lr.leaf, []).extend(lr.counts)
    return tuple(LeafRules(leaf, tuple(cs)) for leaf, cs in out.items())


def rule_totals(verdicts: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Rule id -> elements, summed over verdicts as dicts (Verdict.to_dict: a result's input sets), sorted by id:
    what a run or a campaign totals, so that a rule that clears too much shows."""
    total: dict[str, int] = {}
    for v in verdicts:
        for lr in v.get("rules") or ():
            for rule, n in (lr.get("counts") or {}).items():
                total[rule] = total.get(rule, 0) + int(n)
    return dict(sorted(total.items()))

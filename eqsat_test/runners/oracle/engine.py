"""How the oracle's rule table is applied: each rule's behaviour is a function registered by its id, (context, pending) -> Hit (a mask of the elements it convicts, clears or notes, and its reason); `apply` runs one scope's rules in table order."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from eqsat_test.runners.oracle.rules import BY_ID, CLEARS, CONVICTS, in_scope
from eqsat_test.runners.oracle.verdict import RuleCount


@dataclass(frozen=True)
class Hit:
    """What one rule found: the elements (a bool mask of the leaf's shape, flat or not), and its reason: for
    a clearing or noting rule the note a passing verdict carries, given the count (None: it passes silently);
    for a convicting rule the reason a failure at one of these elements gives."""

    mask: torch.Tensor
    reason: Callable[[int], str] | None = None


# A rule's behaviour: (the scope's context, the elements pending in the charges it may clear (an exemption's:
# in every charge), or None for a convicting rule and where nothing is charged) -> a Hit, or None where it
# does not apply.
Behaviour = Callable[[Any, "torch.Tensor | None"], "Hit | None"]
BEHAVIOUR: dict[str, Callable[..., Any]] = {}


def behaviour(rule_id: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the function below as the behaviour of the table's rule `rule_id`."""
    if rule_id not in BY_ID:
        raise KeyError(f"no oracle rule {rule_id!r} in rules.RULES")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if rule_id in BEHAVIOUR:
            raise KeyError(f"oracle rule {rule_id!r} has two behaviours")
        BEHAVIOUR[rule_id] = fn
        return fn
    return register


@dataclass
class Applied:
    """The outcome of one scope's rules on one context: the charges left (convicting rule id -> mask), the
    elements each clearing rule took (rule id -> mask: out of its charges, or out of judgement), the counts of
    the rules that fired, the notes, and each fired rule's reason."""

    charges: dict[str, torch.Tensor] = field(default_factory=dict)
    cleared: dict[str, torch.Tensor] = field(default_factory=dict)
    counts: list[RuleCount] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reasons: dict[str, Callable[[int], str] | None] = field(default_factory=dict)

    def pending(self, ids=None) -> torch.Tensor | None:
        """The union of the charges named (every charge: None), or None where none is."""
        masks = [m for k, m in self.charges.items() if ids is None or k in ids]
        if not masks:
            return None
        out = masks[0]
        for m in masks[1:]:
            out = out | m
        return out

    def reason(self, rule_id: str, n: int) -> str:
        """The reason a rule that fired gives for n elements ("" where it gives none)."""
        why = self.reasons.get(rule_id)
        return why(n) if why is not None else ""

    def convicting(self, flat_pos: int) -> str | None:
        """The convicting rule whose charge holds the element at `flat_pos`."""
        for k, m in self.charges.items():
            if bool(m.reshape(-1)[flat_pos]):
                return k
        return None


def apply(scope: str, ctx: Any) -> Applied:
    """Run the rules of `scope` on ctx in table order. A convicting rule adds its charge; a clearing rule is
    asked only where elements are pending in the charges it names (or always, where it names none: an
    exemption from judgement, asked with every pending element) and takes its mask out of them; a noting
    rule is asked with every pending element. A rule fires where its mask holds any element: its count goes to the counts, its note (a
    clearing or noting rule's) to the notes; rules of one note_group that fire one after another give one
    note with their counts summed."""
    out = Applied()
    group: tuple[str | None, int, Callable[[int], str] | None] = (None, 0, None)
    for row in in_scope(scope):
        fn = BEHAVIOUR[row.id]
        if group[0] is not None and row.note_group != group[0]:
            _close_group(out, group)
            group = (None, 0, None)
        if row.effect == CONVICTS:
            hit = fn(ctx, None)
            if hit is None:
                continue
            out.charges[row.id] = hit.mask
        elif row.effect == CLEARS:
            targets = [k for k in row.charges if k in out.charges]
            pending = out.pending(targets) if row.charges else out.pending()
            if row.charges and (pending is None or not bool(pending.any())):
                continue
            hit = fn(ctx, pending)
            if hit is None:
                continue
            for k in targets:
                out.charges[k] = out.charges[k] & ~hit.mask
        else:
            hit = fn(ctx, out.pending())
            if hit is None:
                continue
        n = int(hit.mask.sum())
        if not n:
            continue
        out.counts.append(RuleCount(row.id, n))
        out.reasons[row.id] = hit.reason
        if row.effect == CONVICTS:
            continue
        if row.effect == CLEARS:
            out.cleared[row.id] = hit.mask
        if row.note_group is not None:
            group = (row.note_group, group[1] + n, group[2] or hit.reason)
        elif hit.reason is not None:
            out.notes.append(hit.reason(n))
    if group[0] is not None:
        _close_group(out, group)
    return out


def _close_group(out: Applied, group: tuple) -> None:
    _, n, reason = group
    if n and reason is not None:
        out.notes.append(reason(n))

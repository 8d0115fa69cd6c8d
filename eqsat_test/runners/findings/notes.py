"""Notes aggregated: one note group per (model, kind, cause) with counts and examples, instead of one note per variant.

The cause of a note, by kind:
- `unsound-rewrite`: the rule to blame. A variant is built by several rules; the one blamed is the
  rule whose variants most often differ from the seed (unsound variants using it / variants using
  it, over the run's variants), the variants' other rules are listed. A rule declared `exact` that
  shows a difference is a loud group (a rule bug); `approximate`/`ieee-edge` ones say so.
- `nondeterministic`: the op that makes the program so (a random op, or one whose CUDA kernel
  accumulates with atomics: conv-transpose, index_add, scatter_add ...), the first such op of the
  graph; "an op of graph G" where none is known.
- every other kind: its detail's first line with numbers, names and paths taken out (a `flaky`
  note: the kind it claimed and its symptom).
Stdlib only (the campaign store reads note groups without torch).
"""
from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.findings.clusters import canonical_op, normalize_message, symptom_class
from eqsat_test.runners.records import Finding, FindingKind, as_finding, is_bug

EXAMPLES = 3  # details kept per group

# Ops whose eager result differs between two runs: random ops (any device), and ops whose CUDA
# kernels accumulate with atomics in an order that varies (forward pass). Compared without "_"
# and case, so that module names (ConvTranspose2d) and functions (conv_transpose2d) both match.
RANDOM_OPS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
              "native_dropout", "rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm",
              "bernoulli", "multinomial", "normal", "uniform", "rrelu", "poisson", "exponential", "geometric",
              "cauchy", "log_normal", "gumbel_softmax",
              "scaled_dot_product_attention")  # random where its dropout_p > 0
ATOMIC_OPS = ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "index_add", "index_put", "unsafe_index_put", "scatter_add", "scatter_reduce",
              "index_reduce", "put", "index_copy", "embedding_bag", "bincount", "histc", "kthvalue", "median",
              "nanmedian", "ctc_loss", "grid_sampler", "grid_sample")
_SQUASH = {op.replace("_", "").lower(): op for op in RANDOM_OPS + ATOMIC_OPS}


def nondeterministic_op(ops: list[str]) -> str | None:
    """The first op of `ops` known to make a program nondeterministic (random ops before atomic ones)."""
    names = [canonical_op(o) for o in ops]
    for table in (RANDOM_OPS, ATOMIC_OPS):
        for n in names:
            hit = _SQUASH.get(n.replace("_", "").lower())
            if hit in table:
                return hit
    return None


@dataclass(frozen=True)
class NoteGroup:
    """Notes of one kind with one cause on one model: how many, where, and a few examples."""

    key: str  # digest of (model, kind, cause)
    kind: str
    model: str
    cause: str
    count: int = 0  # notes
    variants: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # unsound-rewrite: the member variants' rules (the blamed one first)
    input_sets: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()  # the first few notes' details
    numerics: str | None = None  # unsound-rewrite: the blamed rule's declared class
    loud: bool = False  # an exact rule shows a difference: a rule bug, not declared behaviour
    path: str | None = None  # where to look: a repro, a variant module or a note's folder

    def line(self) -> str:
        """One line for a summary."""
        what = self.cause
        if self.kind == FindingKind.UNSOUND_REWRITE:
            what = f"rule {self.cause}" + (f" ({self.numerics})" if self.numerics else "")
            if self.loud:
                what += ", declared exact: a rule bug"
        shown = [x if len(x) <= 40 else x[:37] + "..." for x in self.input_sets[:3]]
        sets = f", inputs {', '.join(shown)}{' ...' if len(self.input_sets) > 3 else ''}" if self.input_sets else ""
        return (f"[{self.kind}] {what}: {self.count} note(s) in {len(self.variants)} program(s) on "
                f"{'/'.join(self.devices) or '?'}{sets}")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "NoteGroup":
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names})


def _digest(*parts) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:12]


def blame(notes: list, variant_rules: dict[str, list[str]], numerics: dict[str, str] | None = None) -> dict[str, str]:
    """variant -> the rule blamed for its unsound-rewrite notes: the fewest rules that explain every
    unsound variant, picked greedily: a rule declared other than `exact` first (a difference is what
    an approximate or ieee-edge rule may cause; one an exact rule causes is a bug of that rule), then
    the rule in the most unsound variants not yet explained, then the one whose variants most often
    differ from their seed (over the run's variants), then the name."""
    notes = [as_finding(x) for x in notes]
    unsound = {str(n.variant) for n in notes if n.kind == FindingKind.UNSOUND_REWRITE}
    rules_of = {v: set(r) for v, r in variant_rules.items()}
    for n in notes:  # a note's own rules where the manifest is not at hand
        rules_of.setdefault(str(n.variant), set(n.rules or []))
    used: dict[str, int] = {}
    bad: dict[str, int] = {}
    for v, rules in rules_of.items():
        for r in rules:
            used[r] = used.get(r, 0) + 1
            bad[r] = bad.get(r, 0) + (v in unsound)
    out: dict[str, str] = {}
    left = {v for v in unsound if rules_of.get(v)}
    while left:
        def score(r: str) -> tuple:
            return ((numerics or {}).get(r) == "exact", -sum(1 for v in left if r in rules_of[v]),
                    -bad[r] / max(1, used[r]), r)
        best = min({r for v in left for r in rules_of[v]}, key=score)
        for v in [v for v in left if best in rules_of[v]]:
            out[v] = best
            left.discard(v)
    return out


def cause_of(n: Finding, culprit: dict[str, str] | None = None) -> str:
    kind = n.kind
    if kind == FindingKind.UNSOUND_REWRITE:
        return (culprit or {}).get(n.variant, "") or ",".join(sorted(n.rules or [])) or "(no rule)"
    if kind == FindingKind.NONDETERMINISTIC:
        op = nondeterministic_op(list(n.ops or []))
        return op or f"an op of graph {n.graph or '?'}"
    if kind == FindingKind.FLAKY and n.claimed_kind:
        return f"claimed {n.claimed_kind}: {symptom_class(n.with_(kind=n.claimed_kind))}"
    if kind in (FindingKind.SWEEP_ALSO_BASE, FindingKind.SWEEP_UNCONFIRMED):  # a verdict at some sweep point
        what = "fails on special values as at the model's own dtype" if kind == FindingKind.SWEEP_ALSO_BASE \
            else "failed in a batch, not alone"
        return f"{what}: {symptom_class(Finding(kind=FindingKind.MISCOMPILE.value, detail=n.detail))}"
    err = n.error or {}
    if err.get("type"):
        return f"{err['type']}: {normalize_message(err.get('message') or '')}".rstrip(": ")
    detail = str(n.detail or "")
    if n.sweep and detail.startswith("["):  # "[dtype=int8] ...": the sweep point is no cause
        detail = detail.split("] ", 1)[-1]
    return normalize_message(detail, 100) or kind


def aggregate_notes(notes: list, model: str, *, variant_rules: dict[str, list[str]] | None = None,
                    numerics: dict[str, str] | None = None, paths: dict[str, str] | None = None) -> list[NoteGroup]:
    """One group per (model, kind, cause), in order of first appearance; loud ones first.

    variant_rules: every variant's rules (the manifest's), for the blame; numerics: rule -> its
    declared class; paths: variant -> the module to look at. Compiler-bug kinds are left out."""
    notes = [as_finding(x) for x in notes]
    culprit = blame(notes, variant_rules or {}, numerics)
    groups: dict[tuple, list[Finding]] = {}
    for n in notes:
        if is_bug((n.kind or "")):
            continue
        groups.setdefault((n.kind, cause_of(n, culprit)), []).append(n)
    out = []
    for (kind, cause), members in groups.items():
        num = (numerics or {}).get(cause) if kind == FindingKind.UNSOUND_REWRITE else None
        rules = [] if kind != FindingKind.UNSOUND_REWRITE else \
            [cause] + sorted({r for n in members for r in (n.rules or []) if r != cause})
        first = members[0]
        path = first.repro or first.folder or (paths or {}).get(first.variant)
        out.append(NoteGroup(
            key=_digest(model, kind, cause), kind=kind, model=model, cause=cause, count=len(members),
            variants=tuple(dict.fromkeys(n.variant for n in members if n.variant)),
            rules=tuple(rules),
            input_sets=tuple(dict.fromkeys(str(n.sweep or n.input_set) for n in members
                                           if n.sweep or n.input_set)),
            devices=tuple(sorted({str(n.device) for n in members if n.device})),
            backends=tuple(sorted({str(n.backend) for n in members if n.backend})),
            examples=tuple(dict.fromkeys(str(n.detail or "")[:300] for n in members))[:EXAMPLES],
            numerics=num, loud=num == "exact", path=str(path) if path else None))
    return sorted(out, key=lambda g: not g.loud)


def merge_note_groups(groups: list[NoteGroup]) -> list[NoteGroup]:
    """One group per key over several runs: counts summed, members united, examples kept."""
    by: dict[str, NoteGroup] = {}
    for g in groups:
        o = by.get(g.key)
        if o is None:
            by[g.key] = g
            continue

        def union(a, b):
            return tuple(dict.fromkeys(a + b))

        by[g.key] = dataclasses.replace(
            o, count=o.count + g.count, variants=union(o.variants, g.variants), rules=union(o.rules, g.rules),
            input_sets=union(o.input_sets, g.input_sets), devices=tuple(sorted(set(o.devices) | set(g.devices))),
            backends=tuple(sorted(set(o.backends) | set(g.backends))),
            examples=union(o.examples, g.examples)[:EXAMPLES], loud=o.loud or g.loud, path=o.path or g.path)
    return sorted(by.values(), key=lambda g: not g.loud)


def report_note_groups(report: dict, model: str | None = None) -> list[NoteGroup]:
    """A run report's note groups: its own "note_groups", or those of its notes (a report written before
    there were any; without the manifest, each note's own rules are what the blame weighs; `model`
    where the report does not name its own)."""
    if "note_groups" in report:
        return [NoteGroup.from_dict(g) for g in report.get("note_groups") or []]
    notes = [f for f in report.get("findings") or [] if not is_bug(f.get("kind", ""))]
    return aggregate_notes(notes, str(report.get("model") or model or ""))


def run_note_groups(notes: list, manifest: Manifest, bundle) -> list[NoteGroup]:
    """The run's notes, one group per (model, kind, cause) (runners/findings/notes.py)."""
    notes = [as_finding(x) for x in notes]
    numerics = dict(manifest.rules.numerics)
    for v in manifest.variants:  # a user rule's declared class is on the variants it built
        numerics.update(v.rule_numerics or {})
    return aggregate_notes(notes, manifest.model, variant_rules={v.id: list(v.rules) for v in manifest.variants},
                           numerics=numerics, paths={v.id: str(bundle / v.file) for v in manifest.variants})

"""Root-cause clusters: compiler-bug findings grouped by what makes them one bug (op pattern, symptom, input class, backend, device), not by how they were reached.

A finding's signature (write.signature) tells findings apart by their rule lists until they are
minimized, so one seed whose 27 variants fail alike gives 27 signatures. A cluster is keyed by:

- the op pattern: the minimized program's ops where the cluster's representative was minimized
  (canonical op names: `operator.floordiv`, `torch.floor_divide` and `Tensor.__floordiv__` are one
  `floor_divide`); before minimization, the ops that every member's failing output depends on
  (the intersection of their cones) within one scope: the model, its graph and the failing output;
- the symptom class: NaN where finite, finite where NaN/inf, a NaN/inf of another kind, a wrong
  index, exceeds the bound, wrong integers, dtype/shape/structure, or a crash's type and message
  with numbers, names and paths taken out;
- the input class: special values or ordinary ones, the swept dtype, dynamic shapes;
- the backend and the device (seed-miscompile and miscompile are one kind here).

A crash whose message (or, where the message is only its type, its first cause's) names the place
that raised it keys by that message instead of its op pattern: one crash site is one bug in every
model that reaches it (`crash_site`).

Minimization runs once per cluster, on its smallest member (the seed where it is one); the
pattern it leaves re-keys the whole cluster, and clusters whose minimized keys agree merge (in a
run and across a campaign). A cluster names the ledger entry it matches (`known: ledger #N`) and
whether the unmodified seed also fails with it anywhere (`seed_fails`; a cluster without is
"exposed only by rewrites"). Bug kinds are those of records.is_bug (the compiler's and eager's): kinds added
later cluster like the others. Stdlib only (the campaign store and report read clusters without
torch), except `failing_cone`, which reads a stored program.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from eqsat_test.runners.findings.ledger import LedgerEntry, ledger_matches, load_ledger
from eqsat_test.runners.records import Finding, FindingKind, as_finding, is_bug

if TYPE_CHECKING:
    from eqsat_test.lowering.manifest import Manifest

# ---------------------------------------------------------------------------------------------
# the parts of a cluster's key
# ---------------------------------------------------------------------------------------------

# Spellings of one operation (after the module prefix, dunders and the in-place `_` are gone).
_ALIASES = {
    "truediv": "div", "rtruediv": "div", "divide": "div", "true_divide": "div", "itruediv": "div",
    "floordiv": "floor_divide", "rfloordiv": "floor_divide", "ifloordiv": "floor_divide",
    "mod": "remainder", "rmod": "remainder", "imod": "remainder",
    "radd": "add", "iadd": "add", "rsub": "sub", "subtract": "sub", "isub": "sub",
    "multiply": "mul", "rmul": "mul", "imul": "mul", "rpow": "pow", "ipow": "pow", "float_power": "pow",
    "negative": "neg", "absolute": "abs", "clip": "clamp", "arccosh": "acosh", "arctanh": "atanh",
    "arcsinh": "asinh", "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
    "greater": "gt", "less": "lt", "greater_equal": "ge", "less_equal": "le", "not_equal": "ne",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "invert": "bitwise_not",
    "rand": "bitwise_and", "ror": "bitwise_or", "rxor": "bitwise_xor",
    "linalg_vector_norm": "vector_norm", "concat": "cat", "concatenate": "cat",
    "rmatmul": "matmul", "imatmul": "matmul",
}


def canonical_op(name: str) -> str:
    """One name per operation: the base name (after the last "."), without dunders or the in-place
    suffix, spelled as torch spells the function (`operator.truediv` -> div, `Tensor.__rfloordiv__`
    -> floor_divide, `Tensor.add_` -> add)."""
    base = str(name).rsplit(".", 1)[-1]
    if base.startswith("__") and base.endswith("__") and len(base) > 4:
        base = base[2:-2]
    if base.endswith("_") and not base.startswith("_") and len(base) > 1:
        base = base[:-1]
    return _ALIASES.get(base, base)


def base_op(name: str) -> str:
    """The part after the last "." (the ledger's and the signature's op names)."""
    return str(name).rsplit(".", 1)[-1]


_NUMBERS = re.compile(r"(?<![\w.])[-+]?(0x[0-9a-fA-F]+|\d+(\.\d*)?([eE][-+]?\d+)?)")
_PATHS = re.compile(r"(?<![\w.])(/[\w.+\-]+){2,}")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def normalize_message(msg: str, limit: int = 120) -> str:
    """A crash message with what varies between sightings of one crash taken out: paths, quoted
    names, numbers (shapes, sizes, addresses), whitespace; its first line only."""
    first = next((ln for ln in str(msg or "").splitlines() if ln.strip()), "")
    s = _PATHS.sub("<path>", first)
    s = _QUOTED.sub("<name>", s)
    s = _NUMBERS.sub("N", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s[:limit]


def symptom_class(f: Finding | Mapping) -> str:
    """What went wrong, in a word that one bug keeps across the programs that reach it."""
    f = as_finding(f)
    kind = str(f.kind)
    if kind == FindingKind.TIMEOUT:
        return "timeout"
    err = f.error or {}
    if err or kind in (FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH):
        typ = err.get("type") or "?"
        return f"crash: {typ}: {normalize_message(err.get('message') or f.detail or '')}".rstrip(": ")
    d = str(f.detail or "")
    m = re.search(r"\b(shape|dtype) \S.* vs ", d)
    if m:
        return f"wrong {m.group(1)}"
    if "structure differs" in d:
        return "wrong structure"
    if "selected values differ" in d or "out of range" in d or "indices repeat" in d:
        return "wrong index"
    if "(exact)" in d:
        return "wrong integer/bool values"
    if "NaN/Inf positions differ" in d or "non-finite" in d or "disagrees in kind" in d:
        m = re.search(r"eager (\S+), compiled (\S+)", d)
        e, c = (m.group(1).rstrip(","), m.group(2).rstrip(",")) if m else ("", "")
        nonfin = ("nan", "inf", "-inf", "+inf")
        if c == "nan" and e not in nonfin:
            return "NaN where finite"
        if c in nonfin and e not in nonfin:
            return "inf where finite"
        if e in nonfin and c not in nonfin:
            return "finite where NaN/inf"
        if e in nonfin and c in nonfin:
            return "wrong sign of infinity" if {e.lstrip("+"), c.lstrip("+")} == {"inf", "-inf"} else "wrong NaN/inf kind"
        return "NaN/inf where not expected"
    if "signed zero" in d or "sign of zero" in d:
        return "wrong sign of zero"
    if "exceed" in d:
        return "exceeds bound"
    return "wrong values"


_FLOATING = {"float16", "bfloat16", "float32", "float64", "complex64", "complex128"}


# input sets whose values are a class of their own (runners/oracle/inputs.py), by the kind their name starts with
_SET_CLASSES = (("special", "special values"), ("huge", "huge values"), ("domain", "domain edges"))


def input_class(f: Finding | Mapping) -> str:
    """The inputs that show it: special values, huge ones, domain edges or ordinary ones; the dtype, where it is not floating
    (the swept one, else the inputs' own: each integer dtype and bool is a class of its own, integer
    bugs being width-specific, while a float bug shows at every float dtype); dynamic shapes."""
    f = as_finding(f)
    name = str(f.input_set or "")
    sweep = str(f.sweep_key or f.sweep or "")
    parts = [next((what for kind, what in _SET_CLASSES if name.startswith(kind) or name.endswith(kind)
                   or f"-{kind}" in name), "ordinary values")]
    swept = f.sweep_dtype or next((p.split("=", 1)[1] for p in sweep.split(",") if p.startswith("dtype=")), None)
    dtypes = {str(swept)} if swept else set(f.input_dtypes or ())
    dtypes -= _FLOATING
    if dtypes:
        parts.append(f"dtype={'/'.join(sorted(dtypes))}")
    if "dynamic" in sweep:
        parts.append("dynamic")
    return ", ".join(parts)


def leaf_index(f: Finding) -> int | None:
    """The program output a finding's failing leaf belongs to ("[2]['logits']" -> 2), or None."""
    m = re.match(r"\s*\[(\d+)\]", str(f.leaf or ""))
    return int(m.group(1)) if m else None


def _kind(f: Finding) -> str:
    return FindingKind.MISCOMPILE.value if f.kind == FindingKind.SEED_MISCOMPILE else str(f.kind)


def _scope(f: Finding, model: str) -> str:
    """Where an unminimized pattern holds: the model, its graph and the failing output."""
    leaf = leaf_index(f)
    return f"{model}:{f.graph or '?'}" + (f":[{leaf}]" if leaf is not None else "")


def _digest(*parts) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()[:12]


def is_seed_finding(f: Finding) -> bool:
    return bool(f.seed) or f.kind == FindingKind.SEED_MISCOMPILE


def member_ops(f: Finding) -> list[str]:
    """The ops a member's failure depends on, as recorded: the minimized program's, else the failing
    output's cone (`cone_ops`, set by the pipeline), else the whole graph's."""
    for ops in (f.min_ops, f.cone_ops, f.ops):
        if ops is not None:
            return list(ops)
    return []


# ---------------------------------------------------------------------------------------------
# the record
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    """One root cause: its key's parts, its members and what a person needs to act on it."""

    key: str  # digest of the key's parts (kind, backend, device, symptom, input class, pattern or scope)
    kind: str  # compiler-bug kind (seed-miscompile counts as miscompile)
    backend: str
    device: str
    symptom: str
    input_class: str
    pattern: tuple[str, ...]  # canonical op names, sorted: minimized, or the members' shared cone
    minimized: bool  # the pattern is a minimized program's
    scope: str  # "" once minimized; else model:graph[:output], where the pattern holds
    variants: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # rules that built the members (none for the seed), the most used first
    models: tuple[str, ...] = ()
    input_sets: tuple[str, ...] = ()
    findings: int = 0  # member findings
    count: int = 0  # sightings (a finding's variants that failed alike included)
    seed_members: int = 0  # members that are the unmodified seed
    seed_fails: bool = False  # the unmodified seed fails with this root cause somewhere
    representative: str = ""  # the finding id whose repro stands for the cluster
    repro: str | None = None
    detail: str = ""  # the representative's verdict
    ledger: tuple[int, ...] = ()  # ledger entries it matches (docs/bugs/ledger.toml)
    raw_ops: tuple[str, ...] = ()  # the pattern's ops as spelled in the programs (ledger matching)
    also: tuple[str, ...] = ()  # "symptom; input class" of members that show it otherwise (other inputs)
    scopes: tuple[str, ...] = ()  # model:graph[:output] of every member (where unminimized clusters join it)
    absorbed: tuple[str, ...] = ()  # keys of other runs' clusters merged into this one (their sightings)

    @property
    def known(self) -> str:
        """"known: ledger #N" (or "#N or #M"), or "new"."""
        if not self.ledger:
            return "new"
        return "known: ledger " + " or ".join(f"#{i}" for i in self.ledger)

    @property
    def exposed_only_by_rewrites(self) -> bool:
        return not self.seed_fails

    def line(self) -> str:
        """One line for a summary."""
        pat = " ".join(self.pattern) if self.pattern else "(no ops)"
        where = "" if self.minimized else " (not minimized)"
        rules = ", ".join(self.rules[:2]) + (f", +{len(self.rules) - 2}" if len(self.rules) > 2 else "")
        seed = "" if self.seed_fails else f", exposed only by rewrites ({rules or 'no rule recorded'})"
        also = f" (also: {' | '.join(self.also)})" if self.also else ""
        return (f"[{self.kind}] {pat}{where}: {self.symptom}; {self.input_class}{also}; {self.backend}/{self.device}; "
                f"{self.count} sighting(s) in {len(self.variants)} program(s)"
                f"{f' of {len(self.models)} models' if len(self.models) > 1 else ''}{seed}; {self.known}")

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        d["known"] = self.known
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Cluster":
        names = {f.name: f for f in dataclasses.fields(cls)}
        kw = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names}
        return cls(**kw)


# ---------------------------------------------------------------------------------------------
# clustering
# ---------------------------------------------------------------------------------------------


CRASH_SITE_WORDS = 4  # a crash message of at least this many words names its site (a bare "C++ compile error" does not)


def crash_site(f: Finding) -> str | None:
    """A crash's normalized message where it is specific enough to name the place that raised it
    (one crash site is one bug whatever the model: Inductor's "A Boolean argument can only be used in
    Eq and Ne" in every Hugging Face model that reaches it), else None. Where the message itself says
    nothing but its type ("TypeError: ", as InductorError wraps its cause), the first cause that does."""
    if str(f.kind) not in (FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH):
        return None
    err = f.error or {}
    for msg in [err.get("message") or ""] + [c.get("message") or "" for c in err.get("chain") or []]:
        text = normalize_message(msg)
        body = re.sub(r"^[A-Za-z_.]+(Error|Exception): ?", "", text)
        if len([w for w in re.split(r"\W+", body) if re.search(r"[A-Za-z]", w)]) >= CRASH_SITE_WORDS:
            return text
    return None


def member_key(f: Finding, model: str) -> tuple:
    """The key parts of one finding: a specific crash's site (its message); else the minimized pattern
    where it has one, else its scope."""
    head = (_kind(f), f.backend or "", f.device or "", symptom_class(f), input_class(f))
    site = crash_site(f)
    if site is not None:
        return head + ("site", site)
    if f.min_ops is not None:
        return head + ("pattern", tuple(sorted({canonical_op(o) for o in f.min_ops})))
    return head + ("scope", _scope(f, model))


def _rank(f: Finding) -> tuple:
    """The smallest member first: minimized, the seed, a non-sweep finding, fewest ops."""
    return (f.min_ops is None, not is_seed_finding(f), bool(f.sweep), len(member_ops(f)),
            str(f.variant))


def cluster_findings(findings: list, model: str, ledger: list[LedgerEntry] | None = None,
                     pattern_of: dict[str, tuple[str, ...]] | None = None) -> list[Cluster]:
    """The clusters of a run's compiler-bug findings (notes and unconfirmed candidates are left out);
    `clustered` gives the findings labelled with them too."""
    return clustered(findings, model, ledger, pattern_of)[1]


def clustered(findings: list, model: str, ledger: list[LedgerEntry] | None = None,
              pattern_of: dict[str, tuple[str, ...]] | None = None) -> tuple[list[Finding], list[Cluster]]:
    """The findings, in their order, each member with `cluster` (its cluster's key) and, where known,
    `known` ("ledger #N"); and the clusters (as cluster_findings).

    pattern_of: cluster key (a member's `cluster` from an earlier call) -> the minimized ops of that
    cluster's representative: the members take its pattern. Clusters come new first, then by sightings."""
    findings = [as_finding(f) for f in findings]
    bugs = [i for i, f in enumerate(findings) if is_bug((f.kind or "")) and f.confirmed is not False]
    groups: dict[tuple, list[int]] = {}
    for i in bugs:
        f = findings[i]
        k = member_key(f, model)
        if k[-2] == "scope" and pattern_of and f.cluster in pattern_of:  # (a crash site stays its key)
            k = k[:-2] + ("pattern", tuple(sorted({canonical_op(o) for o in pattern_of[f.cluster]})))
        groups.setdefault(k, []).append(i)
    made = {_digest(*k): _make(k, [findings[i] for i in members], model, ledger or [])
            for k, members in groups.items()}
    out = merge_clusters(list(made.values()))
    final = {k: c for c in out for k in (c.key, *c.absorbed)}
    for k, members in groups.items():
        c = final[_digest(*k)]
        for i in members:
            findings[i] = findings[i].with_(cluster=c.key, **({"known": c.known} if c.ledger else {}))
    return findings, out


def _cone_pattern(members: list[Finding]) -> set[str]:
    """The canonical ops every member's failure depends on."""
    shared: set[str] | None = None
    for f in members:
        ops = {canonical_op(o) for o in member_ops(f)}
        shared = ops if shared is None else shared & ops
    return shared or set()


def _make(k: tuple, members: list[Finding], model: str, ledger: list[LedgerEntry]) -> Cluster:
    kind, backend, device, symptom, inputs, how, what = k
    rep = min(members, key=_rank)
    minimized = how == "pattern" or (how == "site" and all(f.min_ops is not None for f in members))
    if how == "pattern":
        pattern = tuple(what)
        raw = sorted({base_op(o) for f in members if f.min_ops is not None for o in f.min_ops}
                     | {base_op(o) for f in members for o in member_ops(f) if canonical_op(o) in pattern})
    else:
        pattern = tuple(sorted(_cone_pattern(members)))
        raw = sorted({base_op(o) for f in members for o in member_ops(f) if canonical_op(o) in pattern})
    variants = sorted({f.variant for f in members if f.variant}
                      | {v for f in members for v in (f.variants_failing_alike or [])}
                      | {v for f in members for v in (f.also_seen_in or [])})
    # the ledger by the cluster's ops, each member's device, dtype and input set (absorbed members too)
    ids = tuple(sorted({e.id for f in members for e in ledger_matches(f.with_(min_ops=raw, ops=raw), ledger)})) \
        if raw else ()
    also = sorted({f"{symptom_class(f)}; {input_class(f)}" for f in members} - {f"{symptom}; {inputs}"})
    return Cluster(
        key=_digest(*k), kind=kind, backend=backend, device=device, symptom=symptom, input_class=inputs,
        pattern=pattern, minimized=minimized, scope="" if how != "scope" else str(what),
        variants=tuple(variants), rules=tuple(_by_frequency(r for f in members for r in set(f.rules or []))),
        models=(model,) if model else (), input_sets=tuple(sorted({str(f.min_input_set or f.input_set)
                                                                    for f in members if f.input_set})),
        findings=len(members), count=sum(int(f.count or 1) for f in members),
        seed_members=sum(1 for f in members if is_seed_finding(f)), seed_fails=False,
        representative=str(rep.id or rep.variant or ""), repro=rep.repro,
        detail=str(rep.min_detail or rep.detail or "")[:400], ledger=ids, raw_ops=tuple(raw),
        also=tuple(also), scopes=tuple(sorted({_scope(f, model) for f in members})))


def mark_seed_fails(clusters: list[Cluster]) -> list[Cluster]:
    """seed_fails: the cluster holds the unmodified seed, or, on its backend and device, a cluster that
    holds it fails the same way (the same scope and symptom) or shrinks to the same pattern."""
    seeded = [c for c in clusters if c.seed_members or c.seed_fails]
    out = []
    for c in clusters:
        fails = c.seed_fails or bool(c.seed_members) or any(
            s.backend == c.backend and s.device == c.device and
            ((s.scope and s.scope == c.scope and s.symptom == c.symptom) or
             (s.minimized and c.minimized and s.pattern == c.pattern))
            for s in seeded)
        out.append(dataclasses.replace(c, seed_fails=fails))
    return out


def sort_clusters(clusters: list[Cluster]) -> list[Cluster]:
    """New root causes first, then known ones; more sightings first."""
    return sorted(clusters, key=lambda c: (bool(c.ledger), -c.count, c.key))


def _union(a, b) -> tuple:
    return tuple(sorted(set(a) | set(b)))


def _by_frequency(items) -> list:
    """Distinct items, the most frequent first (a cluster's rules: the one every member used first)."""
    counts: dict = {}
    for x in items:
        counts[x] = counts.get(x, 0) + 1
    return sorted(counts, key=lambda x: (-counts[x], x))


def _join(o: Cluster, c: Cluster, *, absorbed: bool = False) -> Cluster:
    """`o` with `c`'s members (the first with a repro represents both). absorbed: `c` is another
    cluster taken in (its key, symptom and input class are kept as `absorbed` and `also`)."""
    rep = o if (absorbed or o.repro or not c.repro) else c
    also = _union(o.also, c.also)
    if absorbed:
        also = _union(also, (f"{c.symptom}; {c.input_class}",))
    return dataclasses.replace(
        rep, variants=_union(o.variants, c.variants), rules=tuple(dict.fromkeys(o.rules + c.rules)),
        models=_union(o.models, c.models),
        input_sets=_union(o.input_sets, c.input_sets), findings=o.findings + c.findings, count=o.count + c.count,
        seed_members=o.seed_members + c.seed_members, seed_fails=o.seed_fails or c.seed_fails,
        ledger=_union(o.ledger, c.ledger), raw_ops=_union(o.raw_ops, c.raw_ops), scopes=_union(o.scopes, c.scopes),
        also=tuple(a for a in also if a != f"{rep.symptom}; {rep.input_class}"),
        absorbed=_union(_union(o.absorbed, c.absorbed), (c.key,) if absorbed else ()))


def merge_clusters(clusters: list[Cluster]) -> list[Cluster]:
    """One cluster per root cause, over the clusters of one run or of a campaign's jobs:
    - one per key: members united, counts summed, the first minimized representative kept, seed_fails
      if any run's seed failed;
    - minimized clusters of one kind, backend, device and pattern with members on a common output join
      (one op pattern failing on one output under other inputs, or with another symptom, is one bug:
      floor division's off-by-one and its NaN for inf are ledger #7 both);
    - an unminimized cluster (its findings could not be minimized: sweep points) joins the one
      minimized cluster of its kind, backend and device with members on its output whose pattern its
      failing programs all contain; where two qualify (two bugs on one output) it stays apart.
    A cluster taken in keeps its key in `absorbed`, its symptom and input class in `also`."""
    by: dict[str, Cluster] = {}
    for c in clusters:
        by[c.key] = _join(by[c.key], c) if c.key in by else c
    for k in sorted(by, key=lambda k: (-by[k].findings, -by[k].seed_members, k)):  # the largest (the seed's) keeps its key
        c = by.get(k)
        if c is None or not c.minimized:
            continue
        while True:  # until no other shares an output with it (each join widens its outputs)
            o = next((o for o in by.values() if o.key != k and o.minimized and o.pattern == c.pattern and
                      (o.kind, o.backend, o.device) == (c.kind, c.backend, c.device) and set(o.scopes) & set(c.scopes)),
                     None)
            if o is None:
                break
            c = by[k] = _join(c, by.pop(o.key), absorbed=True)
    for k, c in list(by.items()):
        if c.minimized:
            continue
        hits = [m for m in by.values() if m.minimized and (m.kind, m.backend, m.device) == (c.kind, c.backend, c.device)
                and c.scope in m.scopes and m.pattern and set(m.pattern) <= set(c.pattern)]
        if len(hits) == 1:
            by[hits[0].key] = _join(hits[0], by.pop(k), absorbed=True)
    return sort_clusters(mark_seed_fails(list(by.values())))


def report_clusters(report: dict, ledger: list[LedgerEntry] | None = None, model: str | None = None) -> list[Cluster]:
    """A run report's clusters: its own "clusters", or, for a report written before there were any,
    clusters of its findings (no cones: their graphs' ops stand for the pattern; `model` where the
    report does not name its own; `ledger` by default the checkout's)."""
    if "clusters" in report:
        return [Cluster.from_dict(c) for c in report.get("clusters") or []]
    findings = [Finding.from_dict(f) for f in report.get("findings") or []]
    return cluster_findings(findings, str(report.get("model") or model or ""),
                            load_ledger() if ledger is None else ledger)


def rewrite_yield(clusters: list[Cluster]) -> tuple[int, int]:
    """(clusters exposed only by rewrites, all clusters)."""
    return sum(1 for c in clusters if not c.seed_fails), len(clusters)


def yield_line(clusters: list[Cluster]) -> str:
    n, m = rewrite_yield(clusters)
    return f"exposed only by rewrites: {n} of {m}"


# ---------------------------------------------------------------------------------------------
# the failing output's cone, from the variant's stored program
# ---------------------------------------------------------------------------------------------


def failing_cone(f: Finding | Mapping, bundle: Path, manifest: Manifest) -> tuple[list[str], list[str]] | None:
    """The ops the finding's failing output depends on (the whole program's for a crash), in program
    order, and the dtypes of the inputs it reads, from the variant's stored program; None where there
    is none."""
    f = as_finding(f)
    # lowering imports torch; this module is also read by the campaign store and report without it
    from eqsat_test.lowering.bundle import program_file_name, read_program
    v = manifest.find_variant(f.variant)
    if v is None:
        return None
    pf = bundle / (v.program or program_file_name(v.file))
    if not pf.is_file():
        return None
    try:
        prog = read_program(pf).program
    except (ValueError, OSError, KeyError):
        return None
    seen = _cone(prog, leaf_index(f))
    ops = [prog.nodes[i].name for i in seen if prog.nodes[i].kind == "call"]
    meta = list(prog.meta or ())
    dtypes = sorted({meta[i].dtype for i in seen if prog.nodes[i].kind == "input" and i < len(meta) and meta[i]})
    return ops, dtypes


def _cone(prog, leaf: int | None) -> list[int]:
    """The nodes output `leaf` depends on; every node where the program writes in place (what a value depends on
    then includes the writes made before it is read: the whole program, in its order)."""
    out = prog.nodes[prog.output]
    if prog.effects():
        return prog.reachable()
    return prog.reachable([out.args[leaf]] if leaf is not None and 0 <= leaf < len(out.args) else None)


def cone_ops(prog, leaf: int | None) -> list[str]:
    """The call targets reachable from output `leaf` of a lowering.program.Program (all outputs: None)."""
    return [prog.nodes[i].name for i in _cone(prog, leaf) if prog.nodes[i].kind == "call"]

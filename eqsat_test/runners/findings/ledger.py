"""The bug ledger as data (docs/bugs/ledger.toml, one entry per row of docs/bugs.md): load it, and tell which known root causes a finding may be, by op and device, so a report can point at the entry.

A match is a hint, not a proof: the entry's ops are in the finding's program (the minimized one
where known), its device is the entry's, and its dtype (the sweep's, else its inputs') and input set agree where
the entry names them. Stdlib only; where the ledger file is missing (an installed copy without docs/)
nothing matches.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from eqsat_test.runners.records import BUG_KINDS, Finding, FindingKind, as_finding

REPO = Path(__file__).resolve().parents[3]
LEDGER_FILE = Path("docs") / "bugs" / "ledger.toml"
_KEYS = {"id", "title", "repro", "devices", "ops", "dtypes", "input_sets", "wrong_side", "status", "symptom"}
SYMPTOMS = ("wrong values", "crash", "hang")  # what the bug does; a finding matches entries of its own symptom
WRONG_SIDES = ("compiled", "eager")  # which side of the disagreement is the bug (runners/oracle/referee.py)
STATUSES = ("reproduces", "fixed", "needs a GPU")  # a repro's exit code 1, 0, 77 on one torch and host


@dataclass(frozen=True)
class LedgerEntry:
    id: int
    title: str
    repro: str  # file name under docs/bugs/
    devices: tuple[str, ...]
    ops: tuple[tuple[str, ...], ...]  # every item must be in the program; an item's alternatives: any one
    dtypes: tuple[str, ...] = ()  # empty: any; else the finding's sweep ("dtype=int8") or its inputs must have one
    input_sets: tuple[str, ...] = ()  # empty: any; else a prefix of the finding's input set
    path: Path | None = None  # the ledger file it came from
    wrong_side: str = "compiled"  # the side a reference independent of eager convicts
    # (torch version and host kind, "2.13.0 cpu" / "2.11.0 gpu") -> what the repro gives there, as run
    status: tuple[tuple[str, str], ...] = ()
    symptom: str = "wrong values"  # one of SYMPTOMS

    @property
    def repro_path(self) -> Path | None:
        return self.path.parent / self.repro if self.path else None

    @property
    def ledger_md(self) -> Path | None:
        """docs/bugs.md, the human-readable ledger this entry is a row of."""
        return self.path.parent.parent / "bugs.md" if self.path else None

    def label(self) -> str:
        return f"ledger #{self.id}: {self.title}"


def ledger_path(repo_root_or_path: str | Path | None = None) -> Path:
    """The ledger file: `repo_root_or_path` itself when it is a file, else ROOT/docs/bugs/ledger.toml
    (ROOT: the repository this package sits in when not given)."""
    p = Path(repo_root_or_path) if repo_root_or_path is not None else REPO
    return p if p.is_file() or p.suffix == ".toml" else p / LEDGER_FILE


def load_ledger(repo_root_or_path: str | Path | None = None) -> list[LedgerEntry]:
    """The ledger's entries in file order; [] when the file is missing. A malformed entry raises
    ValueError (the file is the project's own, and a test reads it)."""
    path = ledger_path(repo_root_or_path)
    try:
        import tomllib  # Python 3.11+
    except ImportError:  # Python 3.10: tomli if present, else no ledger (a report without its links)
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return []
    if not path.is_file():
        return []
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    entries = []
    for i, b in enumerate(data.get("bug") or []):
        unknown = set(b) - _KEYS
        missing = {"id", "title", "repro", "devices", "ops"} - set(b)
        if unknown or missing:
            raise ValueError(f"{path}: [[bug]] #{i + 1}: unknown keys {sorted(unknown)}, missing {sorted(missing)}")
        ops = tuple(tuple(a.strip() for a in str(item).split("|") if a.strip()) for item in b["ops"])
        if not ops or not all(ops):
            raise ValueError(f"{path}: ledger #{b['id']}: ops must name at least one op per item")
        side, status = str(b.get("wrong_side", "compiled")), dict(b.get("status") or {})
        symptom = str(b.get("symptom", SYMPTOMS[0]))
        if side not in WRONG_SIDES or not set(status.values()) <= set(STATUSES) or symptom not in SYMPTOMS:
            raise ValueError(f"{path}: ledger #{b['id']}: wrong_side must be one of {WRONG_SIDES}, each status one of "
                             f"{STATUSES}, symptom one of {SYMPTOMS}")
        entries.append(LedgerEntry(
            id=int(b["id"]), title=str(b["title"]), repro=str(b["repro"]),
            devices=tuple(str(d).lower() for d in b["devices"]), ops=ops,
            dtypes=tuple(b.get("dtypes") or ()), input_sets=tuple(b.get("input_sets") or ()), path=path,
            wrong_side=side, status=tuple(status.items()), symptom=symptom))
    return entries


def status_key() -> str:
    """This torch and host as a key of an entry's `status`: "2.13.0 cpu", or "2.11.0 gpu" where a CUDA device is
    (the repros run on it there)."""
    import torch  # only where a status is asked for: the rest of the module is stdlib
    return f"{torch.__version__.split('+')[0]} {'gpu' if torch.cuda.is_available() else 'cpu'}"


_SYMPTOM_OF = {FindingKind.COMPILE_CRASH.value: "crash", FindingKind.RUN_CRASH.value: "crash",
               FindingKind.CAPTURE_CRASH.value: "crash",
               FindingKind.TIMEOUT.value: "hang"}


def _base(op: str) -> str:
    return op.rsplit(".", 1)[-1]  # torch.expm1, Tensor.expm1, torch.special.expm1 -> expm1 (as signature())


def _dtypes(f: Finding) -> set[str]:
    """The dtypes a finding ran at: its sweep's ("dtype=int8"), else those of the inputs its failing
    output reads (`input_dtypes`, recorded by the pipeline)."""
    key = f.sweep_key or f.sweep or ""  # "dtype=int8", "dynamic,dtype=int16", "dtype=uint8,sizes"
    swept = {part.split("=", 1)[1] for part in str(key).split(",") if part.startswith("dtype=")}
    return swept or {str(d) for d in f.input_dtypes or ()}


def ledger_matches(finding: Finding | Mapping, entries: list[LedgerEntry]) -> list[LedgerEntry]:
    """The entries `finding` (a finding dict, as report.json holds it) may be an instance of.

    Only bug kinds match, and only entries of the finding's symptom (a crash matches crashes, a timeout
    hangs, any other kind wrong values) and of its wrong side (an eager-bug matches entries whose eager side is
    wrong, every other kind those whose compiled side is). The program's ops: `min_ops` where the finding was
    minimized, else `ops` (the whole graph's). The device: any of a device-mismatch's "cpu/cuda"."""
    finding = as_finding(finding)
    if finding.kind not in BUG_KINDS or not entries:
        return []
    symptom = _SYMPTOM_OF.get(str(finding.kind), SYMPTOMS[0])
    side = "eager" if finding.kind == FindingKind.EAGER_BUG.value else "compiled"
    ops_src = finding.min_ops
    ops = {_base(o) for o in (ops_src if ops_src is not None else finding.ops or [])}
    devices = {d.lower() for d in str(finding.device or "").split("/") if d}
    dtypes = _dtypes(finding)
    sets = [str(s) for s in (finding.min_input_set, finding.input_set) if s]
    out = []
    for e in entries:
        if e.symptom != symptom or e.wrong_side != side or not devices & set(e.devices):
            continue
        if not all(any(a in ops for a in alts) for alts in e.ops):
            continue
        if e.dtypes and not dtypes & set(e.dtypes):
            continue
        if e.input_sets and not any(s.startswith(p) for s in sets for p in e.input_sets):
            continue
        out.append(e)
    return out


def group_matches(findings: list[dict], entries: list[LedgerEntry]) -> list[int]:
    """Ledger ids any of `findings` (one signature's example and sightings, as the store holds them: JSON)
    matches, ascending."""
    ids = {e.id for f in findings if f for e in ledger_matches(Finding.from_dict(f), entries)}
    return sorted(ids)

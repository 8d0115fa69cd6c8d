"""A finding folder's meta.json: the one writer (a Finding record and what the run says beside it) and the one
reader (back into those records)."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eqsat_test.runners.records import Finding

META = "meta.json"


@dataclass(frozen=True)
class MetaContext:
    """What meta.json says beside the finding: the versions it ran on, the model and its sizes, collect_env's text,
    and the folder's files that could not be made (name -> the error). A field left None is not written."""

    versions: dict | None = None
    model: str | None = None
    sizes: dict | None = None
    collect_env: str | None = None
    write_errors: dict | None = None

    def to_dict(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


_CONTEXT_KEYS = frozenset(f.name for f in dataclasses.fields(MetaContext))


@dataclass(frozen=True)
class FindingMeta:
    """A finding folder's meta.json as records: the finding and its context."""

    finding: Finding
    context: MetaContext

    def to_dict(self) -> dict:
        """meta.json's object: the finding's keys as reported (no local paths), then the context's."""
        return {**self.finding.public().to_dict(), **self.context.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FindingMeta:
        """A meta.json's object, of any version (a key it lacks reads None)."""
        return cls(finding=Finding.from_dict({k: v for k, v in d.items() if k not in _CONTEXT_KEYS}),
                   context=MetaContext(**{k: v for k, v in d.items() if k in _CONTEXT_KEYS}))


def write_meta(folder: Path, f: Finding, context: MetaContext | None = None, *, update: bool = False) -> bool:
    """Write folder/meta.json from finding `f` and `context`: the one writer of a finding folder's meta.json.

    `update`: only where the folder has one already (nothing is made otherwise; returns False), its keys set over
    the file's (a key the file has and the record has not stays, the context's fields left None keep the file's)."""
    path = Path(folder) / META
    d = FindingMeta(f, context or MetaContext()).to_dict()
    if update:
        if not path.is_file():
            return False
        d = {**json.loads(path.read_text()), **d}
    path.write_text(json.dumps(d, indent=1, default=str))
    return True


def read_meta(folder: Path) -> FindingMeta:
    """folder/meta.json as records (FileNotFoundError without one)."""
    return FindingMeta.from_dict(json.loads((Path(folder) / META).read_text()))

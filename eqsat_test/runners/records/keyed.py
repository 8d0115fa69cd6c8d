"""The frozen records that are also read-only mappings of their JSON keys (Task, Result): the base and its helpers."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from enum import Enum
from typing import Any, ClassVar


class Keyed(Mapping):
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
        defaults = field_defaults(type(self))
        return dataclasses.replace(self, **{k: defaults.get(k) for k in gone if k in self._FIELDS},  # type: ignore[type-var]
                                   extra={k: v for k, v in self.extra.items() if k not in gone},
                                   keys_=tuple(k for k in self.keys_ if k not in gone))


def fields_of(cls) -> frozenset[str]:
    """A record's fields that are JSON keys (all but `extra` and `keys_`)."""
    return frozenset(f.name for f in dataclasses.fields(cls)) - {"extra", "keys_"}


def built_keys(rec: Keyed, omit_if_none: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The keys of a record built directly (not read by from_dict): its fields in order (those of
    `omit_if_none` only once set), then `extra`'s keys."""
    names = [f.name for f in dataclasses.fields(rec)  # type: ignore[arg-type]
             if f.name in rec._FIELDS and not (f.name in omit_if_none and getattr(rec, f.name) is None)]
    return tuple(names) + tuple(k for k in rec.extra if k not in names)


def field_defaults(cls) -> dict:
    """A dataclass's fields that have defaults, with their default values."""
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def as_dict(rec: Any) -> dict:
    """A record's dict (`to_dict`), or a dict as is."""
    return rec.to_dict() if isinstance(rec, Keyed) else dict(rec)

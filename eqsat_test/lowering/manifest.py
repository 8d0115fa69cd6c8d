"""The bundle manifest as a typed, frozen record: what generation writes and execution reads.

A bundle folder holds one module per variant, the inputs they load, and `manifest.json`: the model,
the rules that were loaded and fired, each captured graph (`Graph`) and each variant (`Variant`).
Generation (rewrite/generate.py) builds a `Manifest` and writes it with `Manifest.save`; the
execution host (runners/) reads it with `load_manifest`. Nothing changes a manifest in place:
guided extraction's later rounds (rewrite/guide.py) make a new one with `with_variants`.

The JSON (format `eqsat-bundle/1`, `version` MANIFEST_VERSION) is read and written here only:
`Manifest.from_json` / `Manifest.to_json`. A manifest without `version` (version 1: written before
the field existed) reads the same; keys it lacks take the record's defaults.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

BUNDLE_FORMAT = "eqsat-bundle/1"
MANIFEST_VERSION = 2  # 1: no `version` key (bundles written before it); 2: `version` written
MANIFEST_FILE = "manifest.json"


class ManifestError(ValueError):
    """A manifest.json that cannot be read: not JSON, another format, a newer version, a field missing or mistyped."""


@dataclass(frozen=True)
class GraphLeftOut:
    """A captured graph no standalone program can express, and why."""

    id: str
    why: str


@dataclass(frozen=True)
class Saturation:
    """How a graph's e-graph grew (rewrite/saturate.py)."""

    iterations: int
    enodes: int
    stop_reason: str  # a key of rewrite/saturate.STOP_REASONS
    stop: str  # the same in words
    seconds: float
    sizes: tuple[int, ...] = ()  # e-nodes after each iteration


@dataclass(frozen=True)
class Extraction:
    """What extraction found in a graph's e-graph (rewrite/extract.py)."""

    eclasses: int
    enodes: int
    log10_choice_space: float
    attempts: int
    distinct: int  # distinct variants found (guided rounds add theirs)


@dataclass(frozen=True)
class Graph:
    """One captured graph: its inputs, its ops, and how it was rewritten (or why not)."""

    id: str
    inputs_file: str = ""
    input_names: tuple[str, ...] = ()
    is_param: tuple[bool, ...] = ()
    ops: int = 0
    op_names: tuple[str, ...] = ()
    mutating: bool = False
    opaque: tuple[str, ...] = ()
    functionalized: int = 0  # in-place ops made out of place (lowering/functionalize.py)
    effects: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    captured_seed: bool = False  # the seed is the captured program, in-place ops and all
    skipped_rewrites: str | None = None  # why the graph was not rewritten; None: it was
    saturation: Saturation | None = None
    extraction: Extraction | None = None


@dataclass(frozen=True)
class Variant:
    """One program of the bundle: a graph's seed, its functional form, or a rewritten variant."""

    id: str
    graph: str
    file: str  # the module, relative to the bundle
    seed: bool = False
    mode: str = ""  # "seed", "functional", or the extraction mode that drew it
    rules: tuple[str, ...] = ()  # the rules whose firings built it
    rule_numerics: dict[str, str] | None = None  # rule -> its numerics class; None on seeds
    program: str | None = None  # its program's JSON (lowering/bundle.py), relative to the bundle
    dtypes: tuple[str, ...] | None = None  # the dtypes it equals its seed at; None: all
    fixed_sizes: bool = False  # built by a rule that holds at the sizes it was applied at only
    ops: int = 0
    key: str = ""  # the program's key (Program.key)


@dataclass(frozen=True)
class ManifestRules:
    """The rules generation loaded, compiled and fired."""

    count: int = 0
    compiled: int = 0
    errors: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    families: dict[str, str] = field(default_factory=dict)
    numerics: dict[str, str] = field(default_factory=dict)
    dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # rules that hold only at some dtypes
    fix_sizes: tuple[str, ...] = ()  # rules whose right side holds the sizes they were applied at
    left_out: dict[str, str] = field(default_factory=dict)  # rule -> why it was not used
    grad: dict[str, str] | None = None  # training mode: rule -> its gradient class (rewrite/rulegrad.py)
    fired: dict[str, int] = field(default_factory=dict)  # rule -> firings, most first


@dataclass(frozen=True)
class Manifest:
    """A bundle's manifest. `graphs` and `variants` in generation order; a graph's seed is one of its variants."""

    model: str = ""
    model_sha: str = ""
    convention: str = ""
    torch_version: str = ""
    sizes: dict | None = None  # lowering/sizes.record
    seed: int = 0
    created: str = ""
    rules: ManifestRules = field(default_factory=ManifestRules)
    train: bool = False
    graphs: tuple[Graph, ...] = ()
    variants: tuple[Variant, ...] = ()
    graphs_left_out: tuple[GraphLeftOut, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)  # generation's wall seconds per stage

    # -- lookups
    @cached_property
    def _variant_of(self) -> dict[str, Variant]:
        return {v.id: v for v in self.variants}

    @cached_property
    def _graph_of(self) -> dict[str, Graph]:
        return {g.id: g for g in self.graphs}

    def variant(self, vid: str) -> Variant:
        """The variant `vid` (KeyError if the bundle has none)."""
        return self._variant_of[vid]

    def find_variant(self, vid: str | None) -> Variant | None:
        return self._variant_of.get(vid) if vid is not None else None

    def graph(self, gid: str) -> Graph:
        """The graph `gid` (KeyError if the bundle has none)."""
        return self._graph_of[gid]

    def find_graph(self, gid: str) -> Graph | None:
        return self._graph_of.get(gid)

    @cached_property
    def seed_of(self) -> dict[str, str]:
        """graph id -> its seed's variant id."""
        return {v.graph: v.id for v in self.variants if v.seed}

    @cached_property
    def seed_ids(self) -> frozenset[str]:
        return frozenset(v.id for v in self.variants if v.seed)

    @property
    def rewritten_count(self) -> int:
        """Variants that are not seeds."""
        return sum(1 for v in self.variants if not v.seed)

    # -- new manifests
    def with_variants(self, new: Iterable[Variant]) -> Manifest:
        """This manifest with `new` variants added (a guided round's): each counts as one more distinct variant
        found in its graph's extraction."""
        new = tuple(new)
        found: dict[str, int] = {}
        for v in new:
            found[v.graph] = found.get(v.graph, 0) + 1
        graphs = tuple(g if g.extraction is None or g.id not in found else dataclasses.replace(
            g, extraction=dataclasses.replace(g.extraction, distinct=g.extraction.distinct + found[g.id]))
            for g in self.graphs)
        return dataclasses.replace(self, graphs=graphs, variants=self.variants + new)

    def only(self, variants: Iterable[Variant]) -> Manifest:
        """This manifest with just `variants` (the tasks of some variants are made from it)."""
        return dataclasses.replace(self, variants=tuple(variants))

    # -- JSON
    def to_dict(self) -> dict[str, Any]:
        return {"format": BUNDLE_FORMAT, "version": MANIFEST_VERSION, "model": self.model,
                "model_sha": self.model_sha, "convention": self.convention, "torch_version": self.torch_version,
                "sizes": self.sizes, "seed": self.seed, "created": self.created, "rules": _rules_dict(self.rules),
                "train": self.train, "graphs": [_graph_dict(g) for g in self.graphs],
                "variants": [_variant_dict(v) for v in self.variants],
                **({"graphs_left_out": [dataclasses.asdict(g) for g in self.graphs_left_out]}
                   if self.graphs_left_out else {}),
                "timings": dict(self.timings)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Manifest:
        """The one reader of a manifest's JSON object; ManifestError on anything it cannot read."""
        if not isinstance(d, Mapping):
            raise ManifestError(f"a manifest is a JSON object, not {type(d).__name__}")
        if d.get("format") != BUNDLE_FORMAT:
            raise ManifestError(f"unknown bundle format {d.get('format')!r}")
        version = d.get("version", 1)
        if not isinstance(version, int) or not 1 <= version <= MANIFEST_VERSION:
            raise ManifestError(f"manifest version {version!r}: this eqsat-test reads versions 1 to {MANIFEST_VERSION}")
        try:
            return cls(model=str(d.get("model", "")), model_sha=str(d.get("model_sha", "")),
                       convention=str(d.get("convention", "")), torch_version=str(d.get("torch_version", "")),
                       sizes=dict(d["sizes"]) if d.get("sizes") is not None else None, seed=int(d.get("seed", 0)),
                       created=str(d.get("created", "")), rules=_read_rules(d.get("rules") or {}),
                       train=bool(d.get("train", False)),
                       graphs=tuple(_read_graph(g) for g in _list(d, "graphs")),
                       variants=tuple(_read_variant(v) for v in _list(d, "variants")),
                       graphs_left_out=tuple(GraphLeftOut(str(g["id"]), str(g["why"]))
                                             for g in d.get("graphs_left_out") or ()),
                       timings={str(k): float(s) for k, s in (d.get("timings") or {}).items()})
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            if isinstance(e, ManifestError):
                raise
            raise ManifestError(f"a manifest field is missing or mistyped: {type(e).__name__}: {e}") from e

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise ManifestError(f"not valid JSON: {e}") from e
        return cls.from_dict(d)

    def save(self, bundle: str | Path) -> Path:
        """Write BUNDLE/manifest.json (whole: a reader never sees half of it)."""
        path = Path(bundle) / MANIFEST_FILE
        tmp = path.with_name(MANIFEST_FILE + ".tmp")
        tmp.write_text(self.to_json())
        tmp.replace(path)
        return path


def load_manifest(bundle: str | Path) -> Manifest:
    """BUNDLE/manifest.json, read; ManifestError (its message naming the file) where it cannot be."""
    path = Path(bundle) / MANIFEST_FILE
    if not path.is_file():
        raise ManifestError(f"{bundle}: not a bundle (no {MANIFEST_FILE})")
    try:
        return Manifest.from_json(path.read_text())
    except ManifestError as e:
        raise ManifestError(f"{path}: {e}") from e


def manifest_or_none(bundle: str | Path) -> Manifest | None:
    """BUNDLE's manifest, or None where there is none that reads (a run folder listed after a failed run)."""
    try:
        return load_manifest(bundle)
    except (ManifestError, OSError):
        return None


def _list(d: Mapping, key: str) -> list:
    got = d[key]
    if not isinstance(got, list):
        raise ManifestError(f"{key!r} is not a list")
    return got


def _strs(xs) -> tuple[str, ...]:
    return tuple(str(x) for x in xs or ())


def _read_rules(d: Mapping) -> ManifestRules:
    return ManifestRules(
        count=int(d.get("count", 0)), compiled=int(d.get("compiled", 0)), errors=_strs(d.get("errors")),
        names=_strs(d.get("names")), families={str(k): str(v) for k, v in (d.get("families") or {}).items()},
        numerics={str(k): str(v) for k, v in (d.get("numerics") or {}).items()},
        dtypes={str(k): _strs(v) for k, v in (d.get("dtypes") or {}).items()}, fix_sizes=_strs(d.get("fix_sizes")),
        left_out={str(k): str(v) for k, v in (d.get("left_out") or {}).items()},
        grad={str(k): str(v) for k, v in d["grad"].items()} if d.get("grad") is not None else None,
        fired={str(k): int(v) for k, v in (d.get("fired") or {}).items()})


def _rules_dict(r: ManifestRules) -> dict[str, Any]:
    return {"count": r.count, "compiled": r.compiled, "errors": list(r.errors), "names": list(r.names),
            "families": dict(r.families), "numerics": dict(r.numerics),
            "dtypes": {k: list(v) for k, v in r.dtypes.items()}, "fix_sizes": list(r.fix_sizes),
            "left_out": dict(r.left_out), **({"grad": dict(r.grad)} if r.grad is not None else {}),
            "fired": dict(r.fired)}


def _read_graph(d: Mapping) -> Graph:
    s, e = d.get("saturation"), d.get("extraction")
    return Graph(
        id=str(d["id"]), inputs_file=str(d.get("inputs_file", "")), input_names=_strs(d.get("input_names")),
        is_param=tuple(bool(x) for x in d.get("is_param") or ()), ops=int(d.get("ops", 0)),
        op_names=_strs(d.get("op_names")), mutating=bool(d.get("mutating", False)), opaque=_strs(d.get("opaque")),
        functionalized=int(d.get("functionalized", 0)), effects=_strs(d.get("effects")),
        writes=_strs(d.get("writes")), captured_seed=bool(d.get("captured_seed", False)),
        skipped_rewrites=str(d["skipped_rewrites"]) if d.get("skipped_rewrites") is not None else None,
        saturation=None if s is None else Saturation(
            int(s["iterations"]), int(s["enodes"]), str(s["stop_reason"]), str(s.get("stop", s["stop_reason"])),
            float(s["seconds"]), tuple(int(n) for n in s.get("sizes") or ())),
        extraction=None if e is None else Extraction(
            int(e["eclasses"]), int(e["enodes"]), float(e["log10_choice_space"]), int(e["attempts"]),
            int(e["distinct"])))


def _graph_dict(g: Graph) -> dict[str, Any]:
    d: dict[str, Any] = {"id": g.id, "inputs_file": g.inputs_file, "input_names": list(g.input_names),
                         "is_param": list(g.is_param), "ops": g.ops, "op_names": list(g.op_names),
                         "mutating": g.mutating, "opaque": list(g.opaque), "functionalized": g.functionalized,
                         "effects": list(g.effects), "writes": list(g.writes), "captured_seed": g.captured_seed}
    if g.skipped_rewrites is not None:
        d["skipped_rewrites"] = g.skipped_rewrites
    if g.saturation is not None:
        d["saturation"] = {**dataclasses.asdict(g.saturation), "sizes": list(g.saturation.sizes)}
    if g.extraction is not None:
        d["extraction"] = dataclasses.asdict(g.extraction)
    return d


def _read_variant(d: Mapping) -> Variant:
    return Variant(
        id=str(d["id"]), graph=str(d["graph"]), file=str(d["file"]), seed=bool(d.get("seed", False)),
        mode=str(d.get("mode") or ""), rules=_strs(d.get("rules")),
        rule_numerics={str(k): str(v) for k, v in d["rule_numerics"].items()}
        if d.get("rule_numerics") is not None else None,
        program=str(d["program"]) if d.get("program") else None,
        dtypes=_strs(d["dtypes"]) if d.get("dtypes") is not None else None,
        fixed_sizes=bool(d.get("fixed_sizes", False)), ops=int(d.get("ops", 0)), key=str(d.get("key", "")))


def _variant_dict(v: Variant) -> dict[str, Any]:
    d: dict[str, Any] = {"id": v.id, "graph": v.graph, "file": v.file}
    if v.program is not None:
        d["program"] = v.program
    d.update({"seed": v.seed, "mode": v.mode, "rules": list(v.rules)})
    if v.rule_numerics is not None:
        d["rule_numerics"] = dict(v.rule_numerics)
    if v.dtypes is not None:
        d["dtypes"] = list(v.dtypes)
    if v.fixed_sizes:
        d["fixed_sizes"] = True
    d.update({"ops": v.ops, "key": v.key})
    return d

"""A variant's program as stored in a bundle, beside its module: versioned JSON that round-trips.

Generation writes `<id>.py` (the rendered module) and `<id>.program.json` (the `Program` it was
rendered from, with the input names, the inputs file, the title and the notes). Anything that
needs the program itself (the minimizer) reads the JSON and re-renders through `render`, so a
stored program and its module are one thing in two forms.

The JSON (format `eqsat-program/1`):
  {"format": ..., "input_names": [...], "inputs_file": "g0.inputs.pt", "title": ..., "notes": [...],
   "output": K, "nodes": [[kind, name, [args...], [[kwarg, node]...]], ...],
   "meta": [null | [[shape...], dtype], ...]}
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from eqsat_test.lowering.emit import emit_module
from eqsat_test.lowering.lower import to_graph
from eqsat_test.lowering.program import CALL, INPUT, LIT, SEQ, PNode, Program, TensorMeta

PROGRAM_FORMAT = "eqsat-program/1"
PROGRAM_SUFFIX = ".program.json"
_KINDS = (INPUT, LIT, CALL, SEQ)


def program_file_name(module_file: str) -> str:
    """`g0_v001.py` -> `g0_v001.program.json` (the name generation stores a module's program under)."""
    return module_file.removesuffix(".py") + PROGRAM_SUFFIX


def program_to_json(p: Program) -> dict:
    meta = [None if m is None else [list(m.shape), m.dtype] for m in p.meta]
    return {"output": p.output, "meta": meta,
            "nodes": [[n.kind, n.name, list(n.args), [[k, v] for k, v in n.kwargs]] for n in p.nodes]}


def program_from_json(d: dict) -> Program:
    """The Program of `program_to_json`; ValueError on anything that is not a topological DAG."""
    try:
        nodes = []
        for i, (kind, name, args, kwargs) in enumerate(d["nodes"]):
            node = PNode(str(kind), str(name), tuple(int(a) for a in args),
                         tuple((str(k), int(v)) for k, v in kwargs))
            if node.kind not in _KINDS:
                raise ValueError(f"node {i}: unknown kind {node.kind!r}")
            if any(not 0 <= a < i for a in (*node.args, *(v for _, v in node.kwargs))):
                raise ValueError(f"node {i}: an argument that is not an earlier node")
            nodes.append(node)
        meta = tuple(None if m is None else TensorMeta(tuple(int(s) for s in m[0]), str(m[1]))
                     for m in d.get("meta") or ())
        output = int(d["output"])
    except (KeyError, TypeError) as e:
        raise ValueError(f"not a stored program: {type(e).__name__}: {e}") from e
    if not 0 <= output < len(nodes) or nodes[output].kind != SEQ:
        raise ValueError(f"output {output} is not a sequence node")
    if meta and len(meta) != len(nodes):
        raise ValueError(f"{len(meta)} meta entries for {len(nodes)} nodes")
    return Program(tuple(nodes), output, meta)


@dataclass(frozen=True)
class StoredProgram:
    """A program with what rendering it as a standalone module needs."""

    program: Program
    input_names: tuple[str, ...]  # the module's parameters, in call order
    inputs_file: str  # the inputs file the module loads (beside it)
    title: str = ""
    notes: tuple[str, ...] = ()
    # inputs the program writes (lowering/functionalize.py): the last len(effects) outputs are their final
    # values, written back with copy_ at the end of the rendered `program`, in this order
    effects: tuple[str, ...] = ()
    # inputs the program itself writes in place (the captured program, mutations and all): the rendered
    # `program` is it, and `forward` runs it on copies of them and returns them after the outputs
    writes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        return {"format": PROGRAM_FORMAT, "input_names": list(self.input_names),
                "inputs_file": self.inputs_file, "title": self.title, "notes": list(self.notes),
                **({"effects": list(self.effects)} if self.effects else {}),
                **({"writes": list(self.writes)} if self.writes else {}), **program_to_json(self.program)}

    @classmethod
    def from_json(cls, d: dict) -> "StoredProgram":
        fmt = d.get("format") if isinstance(d, dict) else None
        if fmt != PROGRAM_FORMAT:
            raise ValueError(f"unsupported program format {fmt!r} (this version reads {PROGRAM_FORMAT})")
        try:
            return cls(program_from_json(d), tuple(str(n) for n in d["input_names"]), str(d["inputs_file"]),
                       str(d.get("title", "")), tuple(str(n) for n in d.get("notes") or ()),
                       tuple(str(n) for n in d.get("effects") or ()), tuple(str(n) for n in d.get("writes") or ()))
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a stored program: {type(e).__name__}: {e}") from e

    def with_program(self, p: Program) -> "StoredProgram":
        """The same module around another program; its writes are kept where it has as many outputs (the
        minimizer drops outputs: then the written values are outputs like the others, nothing is written)."""
        same = _arity(p) == _arity(self.program)
        return StoredProgram(p, self.input_names, self.inputs_file, self.title, self.notes,
                             self.effects if same else (), self.writes)

    def render(self, title: str | None = None, notes: list[str] | None = None) -> str:
        """The standalone module (lowering/lower.py, then lowering/emit.py's template)."""
        graph = to_graph(self.program, self.input_names)
        return emit_module(graph, title=self.title if title is None else title, inputs_file=self.inputs_file,
                           input_names=list(self.input_names),
                           notes=list(self.notes) if notes is None else notes, effects=list(self.effects),
                           writes=list(self.writes))


def _arity(p: Program) -> int:
    return len(p.nodes[p.output].args)


def write_program(path: Path, sp: StoredProgram) -> None:
    Path(path).write_text(json.dumps(sp.to_json(), separators=(",", ":")))


def read_program(path: Path) -> StoredProgram:
    """ValueError when the file is not a stored program of a format this version reads."""
    try:
        d = json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{Path(path).name}: not JSON: {e}") from e
    return StoredProgram.from_json(d)

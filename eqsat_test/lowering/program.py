"""The plain program IR between stages: a DAG of input/literal/call/sequence nodes, no egglog.

Lifting turns an FX graph into a `Program`, the e-graph stores Programs as terms, extraction
gives Programs back, and lowering turns a Program into an FX graph. Spellings are kept apart:
`operator.add`, `torch.add` and `Tensor.add` are different call targets.
"""
from __future__ import annotations

import ast
import hashlib
import math
from dataclasses import dataclass, field

import torch

INPUT, LIT, CALL, SEQ = "input", "lit", "call", "seq"
UID_KW = "__uid"  # a kwarg that keeps impure nodes (random ops) apart; never rendered


@dataclass(frozen=True)
class PNode:
    kind: str  # INPUT | LIT | CALL | SEQ
    name: str  # input: placeholder name; lit: Python source; call: target; seq: "tuple"/"list"
    args: tuple[int, ...] = ()  # call: positional args; seq: items (indices into Program.nodes)
    kwargs: tuple[tuple[str, int], ...] = ()  # call only


@dataclass(frozen=True)
class TensorMeta:
    shape: tuple[int, ...]
    dtype: str  # "float32", ...

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Program:
    """A DAG in topological order; `output` is the index of the output node (a SEQ)."""

    nodes: tuple[PNode, ...]
    output: int
    meta: tuple[TensorMeta | None, ...] = field(default=(), compare=False)

    def key(self) -> str:
        """A canonical digest: equal for programs that compute the same way with the same names."""
        h = hashlib.sha256()
        memo: dict[int, str] = {}
        for i, n in enumerate(self.nodes):
            s = f"{n.kind}|{n.name}|{','.join(memo[a] for a in n.args)}|" + ",".join(
                f"{k}={memo[v]}" for k, v in n.kwargs)
            memo[i] = hashlib.sha256(s.encode()).hexdigest()[:20]
        h.update(memo[self.output].encode())
        return h.hexdigest()[:16]

    @property
    def num_ops(self) -> int:
        return sum(1 for n in self.reachable() if self.nodes[n].kind == CALL)

    def reachable(self, roots: list[int] | None = None) -> list[int]:
        """The nodes `roots` (default: the output and the in-place writes, `effects()`) depend on, themselves
        included, sorted."""
        seen: set[int] = set()
        stack = list(roots) if roots is not None else [self.output, *self.effects()]
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            n = self.nodes[i]
            stack.extend(n.args)
            stack.extend(v for _, v in n.kwargs)
        return sorted(seen)

    def effects(self) -> list[int]:
        """The calls that write a tensor in place (`x.add_(y)`, `torch.relu_(x)`, `x[i] = v`, `x += y`,
        `F.relu(x, inplace=True)`): effects, kept like outputs wherever what reads the output is kept."""
        return [i for i, n in enumerate(self.nodes) if n.kind == CALL and _writes_in_place(self, n)]

    def ops(self) -> list[str]:
        """The calls' targets (what rules match on)."""
        return [self.nodes[i].name for i in self.reachable() if self.nodes[i].kind == CALL]

    def op_labels(self) -> list[str]:
        """The calls' op names as a finding reports them (`op_label`)."""
        return [self.op_label(self.nodes[i]) for i in self.reachable() if self.nodes[i].kind == CALL]

    def op_label(self, n: PNode) -> str:
        """A call's target, with the names the ledger needs: `div(..., rounding_mode="floor")` is `floor_divide`
        (the same operation: a finding of it is one of floor division's) and `rounding_mode="trunc"`
        `trunc_divide` (plain `div` is in too many programs to tell a finding by), and a multiplication by a
        literal zero is `mul_by_zero` (what a compiler may fold to 0, wrongly for NaN and inf; plain `mul`, as
        `div`)."""
        head, base = n.name.rsplit(".", 1) if "." in n.name else ("", n.name)
        mode = _literal_kwarg(self, n, "rounding_mode") if base in ("div", "div_") else None
        if mode in ("floor", "trunc"):
            return f"{head}.{mode}_divide" + ("_" if base.endswith("_") else "")
        if base in ("mul", "mul_", "imul") and any(
                self.nodes[a].kind == LIT and _literal(self.nodes[a].name) == 0 for a in n.args[:2]):
            return f"{head}.mul_by_zero"
        return n.name

    def inputs(self) -> list[str]:
        return [n.name for n in self.nodes if n.kind == INPUT]


def _literal(source: str) -> object:
    """A literal node's Python value (None where it is not a plain literal)."""
    try:
        return ast.literal_eval(source)
    except (ValueError, SyntaxError):
        return None


def _literal_kwarg(p: Program, n: PNode, key: str) -> object:
    """A call's keyword argument when it is a literal (its Python value), else None."""
    k = dict(n.kwargs).get(key)
    return _literal(p.nodes[k].name) if k is not None and p.nodes[k].kind == LIT else None


def _writes_in_place(p: Program, n: PNode) -> bool:
    base = n.name.rsplit(".", 1)[-1]
    if base.endswith("_") and not base.endswith("__") and base != "requires_grad_":
        return True
    if n.name in ("operator.setitem", "operator.delitem") or (
            n.name.startswith("operator.i") and base not in ("invert", "is_", "is_not", "index")):
        return True
    return any(k == "inplace" and p.nodes[v].kind == LIT and p.nodes[v].name == "True" for k, v in n.kwargs)


class ProgramBuilder:
    """Hash-consing builder: equal nodes are stored once (so a DAG stays a DAG)."""

    def __init__(self) -> None:
        self.nodes: list[PNode] = []
        self.meta: list[TensorMeta | None] = []
        self._index: dict[PNode, int] = {}

    def add(self, node: PNode, meta: TensorMeta | None = None) -> int:
        i = self._index.get(node)
        if i is None:
            i = len(self.nodes)
            self.nodes.append(node)
            self.meta.append(meta)
            self._index[node] = i
        elif meta is not None and self.meta[i] is None:
            self.meta[i] = meta
        return i

    def input(self, name: str, meta: TensorMeta | None = None) -> int:
        return self.add(PNode(INPUT, name), meta)

    def lit(self, value) -> int:
        return self.add(PNode(LIT, lit_source(value)))

    def call(self, target: str, args, kwargs=(), meta: TensorMeta | None = None) -> int:
        return self.add(PNode(CALL, target, tuple(args), tuple(kwargs)), meta)

    def seq(self, kind: str, items) -> int:
        return self.add(PNode(SEQ, kind, tuple(items)))

    def build(self, output: int) -> Program:
        return Program(tuple(self.nodes), output, tuple(self.meta))


def dtype_name(dt: torch.dtype) -> str:
    return str(dt).removeprefix("torch.")


def lit_source(value) -> str:
    """Python source for a literal argument value (round-trips through `lit_value`)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if isinstance(value, torch.dtype):
        return f"torch.{dtype_name(value)}"
    if isinstance(value, torch.device):
        return "DEVICE"  # bundles are device-agnostic: the runner sets DEVICE
    if isinstance(value, torch.memory_format):
        return str(value)  # e.g. torch.contiguous_format
    if isinstance(value, torch.layout):
        return str(value)
    if isinstance(value, slice):
        return f"slice({lit_source(value.start)}, {lit_source(value.stop)}, {lit_source(value.step)})"
    if value is Ellipsis:
        return "Ellipsis"
    if isinstance(value, torch.Size):
        return f"torch.Size({list(value)!r})"
    if isinstance(value, complex):
        return repr(value)
    raise TypeError(f"cannot express {type(value).__name__} value {value!r} as a literal")


LIT_NAMESPACE = {"torch": torch, "float": float, "slice": slice, "Ellipsis": Ellipsis,
                 "DEVICE": torch.device("cpu")}


def lit_value(source: str, device: torch.device | None = None):
    ns = dict(LIT_NAMESPACE)
    if device is not None:
        ns["DEVICE"] = device
    return eval(source, ns)  # noqa: S307 - our own literal sources only


def lit_kind(source: str) -> str | None:
    """"float", "int" or "bool" for numeric literals (what `Scalar(...)` rule variables match)."""
    if source in ("True", "False"):
        return "bool"
    try:
        v = lit_value(source)
    except Exception:
        return None
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    return None

"""Render an FX graph as a standalone Python module (codegen_templates/variant.py.j2), spellings kept."""
from __future__ import annotations

import operator

import torch
import torch.fx

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.program import lit_source
from eqsat_test.lowering.targets import BINARY, UNARY, defining_module, name_of

# Index-producing ops: how to find the indexed tensor and dim (for tie-aware judging).
_INDEX_OPS = {"argmax", "argmin", "argsort"}
_PAIR_OPS = {"topk", "sort", "max", "min", "kthvalue", "median", "mode", "cummax", "cummin"}


# torch functions that make a tensor from nothing (no tensor argument to take a device from): without a
# device they make it on the CPU, so a program run on a GPU would mix devices. Rendered with the
# program's device (DEVICE, which the runner sets) unless the call names a device of its own.
FACTORIES = frozenset({
    "tensor", "as_tensor", "scalar_tensor", "zeros", "ones", "full", "empty", "empty_strided", "arange", "range",
    "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm", "tril_indices", "triu_indices",
    "bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window",
})


def makes_tensor(name: str) -> bool:
    """Whether a call target (a dotted name) is a FACTORIES function of the torch namespace."""
    mod, _, base = name.rpartition(".")
    return mod == "torch" and base in FACTORIES


def _base(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_function":
        return getattr(node.target, "__name__", "")
    return ""


def _dim_arg(node: torch.fx.Node, pos: int, default):
    if "dim" in node.kwargs:
        return node.kwargs["dim"]
    return node.args[pos] if len(node.args) > pos else default


class _Emitter:
    def __init__(self) -> None:
        self.modules: set[str] = {"torch"}

    def arg(self, a) -> str:
        if isinstance(a, torch.fx.Node):
            return a.name
        if isinstance(a, list):
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if isinstance(a, tuple) and not isinstance(a, torch.Size):
            inner = ", ".join(self.arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        return lit_source(a)

    def call_args(self, node: torch.fx.Node, skip_first: bool = False, on_device: bool = False) -> str:
        """The call's arguments; on_device: a device that is not given (None, or no device at all) or given as
        a string (a captured "cpu") is the program's, DEVICE."""
        args = node.args[1:] if skip_first else node.args
        kwargs = dict(node.kwargs)
        if on_device and (kwargs.get("device") is None or isinstance(kwargs.get("device"), str)):
            kwargs["device"] = torch.device("cpu")  # rendered as DEVICE (lowering/program.py lit_source)
        parts = [self.arg(a) for a in args] + [f"{k}={self.arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def expr(self, node: torch.fx.Node) -> str:
        if node.op == "call_method":
            return f"{self.arg(node.args[0])}.{node.target}({self.call_args(node, True)})"
        name = name_of(node.target)
        if name is None:
            raise ValueError(f"cannot render call target {node.target!r}: it has no importable name")
        if name in BINARY and len(node.args) == 2 and not node.kwargs:
            return f"{self.arg(node.args[0])} {BINARY[name]} {self.arg(node.args[1])}"
        if name in UNARY and len(node.args) == 1 and not node.kwargs:
            return f"{UNARY[name]}{self.arg(node.args[0])}"
        if node.target is operator.getitem and len(node.args) == 2:
            return f"{self.arg(node.args[0])}[{self.arg(node.args[1])}]"
        self.modules.add(name.split(".", 1)[0])
        registers = defining_module(name)  # a library's custom op exists once that library is imported
        if registers:
            self.modules.add(registers)
        positional_device = name == "torch.as_tensor" and len(node.args) >= 3  # as_tensor(data, dtype, device)
        return f"{name}({self.call_args(node, on_device=makes_tensor(name) and not positional_device)})"

    def index_sources(self, out) -> list[tuple[str, str, str]]:
        """(leaf path, source variable, dim source) for outputs that are indices into a tensor."""
        found = []

        def walk(v, path):
            if isinstance(v, (list, tuple)):
                for i, x in enumerate(v):
                    walk(x, f"{path}[{i}]")
                return
            if not isinstance(v, torch.fx.Node):
                return
            base = _base(v)
            if base in _INDEX_OPS and v.args:
                dim = _dim_arg(v, 1, -1 if base == "argsort" else None)
                src = self.arg(v.args[0])
                if dim is None:
                    found.append((path, f"{src}.reshape(-1)", "0"))
                else:
                    found.append((path, src, repr(dim)))
            elif base == "getitem" and v.args[1] == 1 and isinstance(v.args[0], torch.fx.Node):
                m = v.args[0]
                mb = _base(m)
                if mb in _PAIR_OPS and m.args and (mb in ("topk", "sort") or len(m.args) > 1 or "dim" in m.kwargs):
                    default = -1
                    pos = 2 if mb == "topk" else 1
                    dim = _dim_arg(m, pos, default)
                    if not isinstance(dim, bool) and isinstance(dim, int):
                        found.append((path, self.arg(m.args[0]), repr(dim)))

        walk(out, "")
        return found


def emit_module(gm: torch.fx.GraphModule | torch.fx.Graph, *, title: str, inputs_file: str, input_names,
                notes: list[str] | None = None, effects: list[str] | tuple = (),
                writes: list[str] | tuple = ()) -> str:
    """A standalone module: `forward(*inputs)`, `Model`, `get_inputs()`, `index_sources(...)`.

    effects: the inputs the program writes (lowering/functionalize.py), one per trailing output of `gm`, whose
    value it is. Then `program(*inputs)` is the captured program itself: it computes, writes those values
    into its inputs with copy_ (in order) and returns the other outputs; `forward` computes the same values
    without writing and returns the written values after the outputs, so that callers (which run a program
    several times on the same inputs) see no write, the written values are judged like outputs, and a
    training step never finds a tensor it saved for backward written after the fact.

    writes: the inputs `gm` itself writes in place (the captured program, mutations and all). Then `program`
    is `gm` as it is, and `forward` runs it on copies of those inputs (`written_call`) and returns their final
    values after the outputs, as for `effects`. Either way WRITES names the written inputs, and
    `written_call(program, inputs)` equals `forward(*inputs)`: runners compile `program` so that the compiler
    sees the writes."""
    graph = gm if isinstance(gm, torch.fx.Graph) else gm.graph
    e = _Emitter()
    params = [n.name for n in graph.nodes if n.op == "placeholder"]
    lines = []
    out = None
    for node in graph.nodes:
        if node.op in ("call_function", "call_method"):
            lines.append(f"{node.name} = {e.expr(node)}")
        elif node.op == "output":
            out = node.args[0]
    outs = tuple(out) if isinstance(out, (list, tuple)) else (out,)
    ret = e.arg(out if isinstance(out, (list, tuple)) else (out,))
    if effects and writes:
        raise ValueError("a program either writes its inputs itself (writes) or returns their values (effects)")
    if any(name not in params for name in writes):
        raise ValueError(f"writes {list(writes)} are not among the program's inputs {params}")
    copies, kept = [], ret
    if effects:
        if len(effects) > len(outs) or any(name not in params for name in effects):
            raise ValueError(f"effects {list(effects)} do not fit the program's {len(outs)} outputs and inputs")
        k = len(outs) - len(effects)
        copies = [(name, e.arg(v)) for name, v in zip(effects, outs[k:])]
        kept = e.arg(tuple(outs[:k]))
    return render(
        "variant.py.j2", title=title, params=params, body=lines, ret=ret,
        modules=sorted(e.modules), inputs_file=inputs_file, input_names=list(input_names),
        index_sources=e.index_sources(out), notes=notes or [], copies=copies, kept=kept,
        written=[name for name, _ in copies] or list(writes), in_place=bool(writes),
    )

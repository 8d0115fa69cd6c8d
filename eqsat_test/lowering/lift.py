"""Lift a captured FX graph into the program IR (the form that becomes e-graph terms)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.fx

from eqsat_test.lowering.program import UID_KW, Program, ProgramBuilder, TensorMeta, dtype_name
from eqsat_test.lowering.targets import is_mutating, is_random, name_of


@dataclass(frozen=True)
class LiftedGraph:
    program: Program
    input_names: tuple[str, ...]  # program inputs, in call order (placeholders then constants)
    constants: dict  # get_attr name -> tensor (appended to the inputs)
    opaque: tuple[str, ...]  # targets that have no importable name (kept but not renderable)
    mutating: bool  # the graph mutates tensors in place: rewrites are disabled for it
    fx_nodes: dict  # FX node name -> program node index
    effects: tuple[str, ...] = ()  # inputs written: the last outputs are their values (lowering/functionalize.py)


def _meta(node: torch.fx.Node) -> TensorMeta | None:
    v = node.meta.get("example_value", node.meta.get("val"))
    if isinstance(v, torch.Tensor):
        try:
            return TensorMeta(tuple(int(s) for s in v.shape), dtype_name(v.dtype))
        except (TypeError, ValueError):  # symbolic sizes
            return None
    return None


def _target(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    return name_of(node.target) or opaque_name(node.target)


def opaque_name(target) -> str:
    """`opaque.<module>.<qualified name>` for a call target no import can reach (a local function, a
    lambda, a higher-order operator): what the summary names when the graph cannot be written out."""
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__
    return f"opaque.{getattr(target, '__module__', None) or '?'}.{qual}"


# Ops whose result is a fresh tensor no one else holds: an in-place op on it is its out-of-place
# twin (`torch.zeros_like(m, dtype=f).masked_fill_(m, -inf)`, as nn.MultiheadAttention makes its
# float key padding mask).
_FRESH = {"torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like", "torch.zeros",
          "torch.ones", "torch.full", "torch.empty", "Tensor.clone", "torch.clone"}


def _out_of_place(gm: torch.fx.GraphModule) -> dict:
    """{node: out-of-place target} for each `t.op_(...)` whose t is a fresh tensor (_FRESH) used by
    nothing else, where the op has an out-of-place method: the same values without a mutation."""
    out = {}
    for node in gm.graph.nodes:
        if node.op != "call_method" or not is_mutating(f"Tensor.{node.target}") or not node.args:
            continue
        src = node.args[0]
        if (isinstance(src, torch.fx.Node) and src.op in ("call_function", "call_method")
                and _target(src) in _FRESH and set(src.users) == {node}
                and hasattr(torch.Tensor, node.target[:-1])):
            out[node] = f"Tensor.{node.target[:-1]}"
    return out


def lift_fx(gm: torch.fx.GraphModule, effects: tuple[str, ...] = (), *, captured: bool = False) -> LiftedGraph:
    """The program of `gm`; effects: the inputs a functionalized graph writes (its last outputs' targets).
    captured: `gm` is the graph as captured, in-place ops and all, lifted call for call in its order (every
    node kept apart, as for a mutating graph), for the captured seed."""
    functional = {} if captured else _out_of_place(gm)
    b = ProgramBuilder()
    env: dict[str, int] = {}
    constants: dict = {}
    opaque: list[str] = []
    uid = 0

    def arg(a) -> int:
        if isinstance(a, torch.fx.Node):
            return env[a.name]
        if isinstance(a, (list, tuple)) and not isinstance(a, torch.Size):
            return b.seq("list" if isinstance(a, list) else "tuple", [arg(x) for x in a])
        if isinstance(a, slice):  # structural, so a rule's scalar variable can sit inside it
            return b.seq("slice", [arg(a.start), arg(a.stop), arg(a.step)])
        if isinstance(a, dict):
            raise TypeError("dict arguments are not supported")
        return b.lit(a)

    input_names: list[str] = []
    output = None
    mutating = captured or any(is_mutating(functional.get(n) or _target(n)) for n in gm.graph.nodes
                               if n.op in ("call_function", "call_method"))
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            env[node.name] = b.input(node.name, _meta(node))
            input_names.append(node.name)
        elif node.op == "get_attr":
            value = gm
            for part in str(node.target).split("."):
                value = getattr(value, part)
            constants[node.name] = value.detach().clone() if isinstance(value, torch.Tensor) else value
            env[node.name] = b.input(node.name, _meta(node) or (
                TensorMeta(tuple(value.shape), dtype_name(value.dtype)) if isinstance(value, torch.Tensor) else None))
        elif node.op in ("call_function", "call_method"):
            target = functional.get(node) or _target(node)
            if target.startswith("opaque."):
                opaque.append(target)
            args = [arg(a) for a in node.args]
            kwargs = [(k, arg(v)) for k, v in node.kwargs.items()]
            if mutating or is_random(target, node.args, node.kwargs) or target.startswith("opaque."):
                kwargs.append((UID_KW, b.lit(uid)))
                uid += 1
            env[node.name] = b.call(target, args, kwargs, _meta(node))
        elif node.op == "call_module":
            raise TypeError(f"call_module {node.target} is not supported (Dynamo inlines modules)")
        elif node.op == "output":
            out = node.args[0]
            output = arg(out if isinstance(out, (list, tuple)) else (out,))
    if output is None:
        raise TypeError("graph has no output")
    return LiftedGraph(
        program=b.build(output), input_names=tuple(input_names) + tuple(constants),
        constants=constants, opaque=tuple(opaque), mutating=mutating,
        fx_nodes=dict(env), effects=tuple(effects),
    )

"""Trace a rule into two separately runnable sides (lhs, rhs) for `rules check`, with a size guard."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.fx
from torch.fx.proxy import GraphAppendingTracer, Proxy

from eqsat_test.rewrite.ruledsl import Rule


class _Tracer(GraphAppendingTracer):
    """Proxy tracer that lets constants (tensors made eagerly inside the rule) ride in node args."""

    def create_arg(self, a: Any):
        if isinstance(a, torch.Tensor):
            return a
        return super().create_arg(a)


@dataclass
class Sides:
    graph: torch.fx.Graph | None
    lhs: Any  # arg structure over graph nodes
    rhs: Any
    fallback: Callable | None = None  # when tracing failed: runs the whole function eagerly
    trace_error: str | None = None
    lhs_nodes: list = field(default_factory=list)  # nodes each side needs, in graph order
    rhs_nodes: list = field(default_factory=list)


def trace_rule(rule: Rule, scalars: dict) -> Sides:
    graph = torch.fx.Graph()
    tracer = _Tracer(graph)
    proxies = {v: Proxy(graph.placeholder(v), tracer) for v in rule.tensor_vars}
    try:
        out = rule.fn(**proxies, **scalars)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"rule function must return (lhs, rhs), got {type(out).__name__}")
        lhs, rhs = (torch.fx.node.map_aggregate(side, _node_of) for side in out)
    except Exception as e:  # untraceable with proxies: fall back to running both sides at once
        def whole(**kw):
            return rule.fn(**kw, **scalars)

        return Sides(None, None, None, fallback=whole, trace_error=f"{type(e).__name__}: {e}")
    return Sides(graph, lhs, rhs, lhs_nodes=_order(graph, lhs), rhs_nodes=_order(graph, rhs))


def _node_of(a: Any) -> Any:
    return a.node if isinstance(a, Proxy) else a


def needed_nodes(arg: Any) -> set:
    seen: set = set()
    stack = []
    torch.fx.node.map_arg(arg, lambda n: stack.append(n))
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for a in (n.args, n.kwargs):
            torch.fx.node.map_arg(a, lambda m: stack.append(m))
    return seen


def _order(graph: torch.fx.Graph, side: Any) -> list:
    """The nodes `side` depends on, in graph order."""
    needed = needed_nodes(side)
    return [n for n in graph.nodes if n in needed]


class TooLarge(Exception):
    pass


def run_side(nodes: list, side: Any, inputs: dict, max_numel: int | None = None) -> Any:
    """Evaluate one side; with `max_numel`, raise TooLarge as soon as a value has more elements
    (used on "meta" tensors to size a large sample before allocating it)."""
    env: dict = {}

    def val(a):
        return torch.fx.node.map_arg(a, lambda n: env[n])

    for n in nodes:
        if n.op == "placeholder":
            env[n] = inputs[n.target]
        elif n.op == "call_function":
            env[n] = n.target(*val(n.args), **val(n.kwargs))
        elif n.op == "call_method":
            self_, *rest = val(n.args)
            env[n] = getattr(self_, n.target)(*rest, **val(n.kwargs))
        else:  # pragma: no cover - proxies only make the three kinds above
            raise RuntimeError(f"unexpected node {n.op}")
        if max_numel is not None:
            ts = [t for _, t in out_leaves(env[n]) if isinstance(t, torch.Tensor)]
            if len(ts) > 16 or sum(t.numel() for t in ts) > max_numel:
                raise TooLarge(f"{getattr(n.target, '__name__', n.target)} makes {len(ts)} tensors of "
                                f"{sum(t.numel() for t in ts)} elements")
    return val(side)

def out_leaves(x: Any, path: str = "out") -> list[tuple[str, Any]]:
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        out = []
        for i, v in enumerate(x):
            out += out_leaves(v, f"{path}[{i}]")
        return out
    return [(path, x)]

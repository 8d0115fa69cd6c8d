"""Random FX graphs of a chosen size for scale benchmarks: elementwise, layout and reduction chains.

Graphs are built directly with torch.fx (no Dynamo), with the call targets and method names
Dynamo would record for the same Python code (`operator.add` for `+`, `torch.relu`, method `t`,
...), so that the built-in rules fire on them. Every node carries `meta["val"]` (a real tensor
computed while building), which is what lifting reads for rank and dtype facts.
"""
from __future__ import annotations

import operator
import random

import torch
import torch.fx

D = 8  # every "main" tensor is D x D: transposes, permutes and reshapes keep it composable


class _Builder:
    def __init__(self, seed: int) -> None:
        self.g = torch.fx.Graph()
        self.rng = random.Random(seed)
        self.gen = torch.Generator().manual_seed(seed)
        self.pool: list[torch.fx.Node] = []  # D x D float tensors
        self.inputs: list[torch.Tensor] = []
        self.ops = 0

    def placeholder(self, name: str) -> torch.fx.Node:
        t = torch.randn(D, D, generator=self.gen)
        n = self.g.placeholder(name)
        n.meta["val"] = t
        self.inputs.append(t)
        self.pool.append(n)
        return n

    def fn(self, target, *args, **kwargs) -> torch.fx.Node:
        return self._node(self.g.call_function(target, args, kwargs), target, args, kwargs)

    def meth(self, name: str, *args, **kwargs) -> torch.fx.Node:
        return self._node(self.g.call_method(name, args, kwargs), name, args, kwargs)

    def _node(self, node, target, args, kwargs) -> torch.fx.Node:
        def val(a):
            return a.meta["val"] if isinstance(a, torch.fx.Node) else a
        a = [val(x) for x in args]
        kw = {k: val(v) for k, v in kwargs.items()}
        node.meta["val"] = getattr(a[0], target)(*a[1:], **kw) if isinstance(target, str) else target(*a, **kw)
        self.ops += 1
        return node

    def pick(self) -> torch.fx.Node:
        r = self.rng.random()
        if r < 0.55:
            return self.pool[-1]
        if r < 0.85:  # prefer results nobody uses yet: fewer graph outputs
            unused = [n for n in self.pool[-32:] if not n.users and n.op != "placeholder"]
            if unused:
                return self.rng.choice(unused)
        return self.rng.choice(self.pool[-12:])


def _step(b: _Builder, room: int) -> torch.fx.Node:
    """One random snippet (1-3 ops, at most `room`) whose result is a D x D float tensor."""
    x = b.pick()
    r = b.rng.random()
    if room < 3:
        return b.fn(b.rng.choice([torch.relu, torch.sigmoid, torch.tanh, operator.neg]), x)
    if r < 0.30:  # binary elementwise
        y = b.pick()
        op = b.rng.choice([operator.add, operator.mul, operator.sub, operator.add, torch.maximum])
        return b.fn(op, x, y)
    if r < 0.55:  # unary elementwise (bounded, so deep chains stay finite)
        op = b.rng.choice([torch.relu, torch.sigmoid, torch.tanh, torch.abs, operator.neg])
        return b.fn(op, x)
    if r < 0.70:  # layout
        k = b.rng.randrange(4)
        if k == 0:
            return b.meth("t", x)
        if k == 1:
            return b.meth("transpose", x, 0, 1)
        if k == 2:
            return b.meth("permute", x, 1, 0)
        return b.meth("reshape", b.meth("flatten", x), D, D)
    if r < 0.80 and room >= 4:  # reduction, broadcast back
        y = b.pick()
        k = b.rng.randrange(3)
        if k == 0:
            red = b.meth("sum", x, 1, keepdim=True)
        elif k == 1:
            red = b.meth("mean", x, -1, keepdim=True)
        else:
            red = b.meth("sum", b.meth("t", x), 0)
        return b.fn(torch.tanh, b.fn(operator.add, y, red))
    if r < 0.88:  # scalar arithmetic
        k = b.rng.randrange(3)
        if k == 0:
            return b.fn(operator.mul, x, 0.5)
        if k == 1:
            return b.fn(operator.add, x, 1.0)
        return b.fn(torch.clamp, x, -1.0, 1.0)
    if r < 0.94:  # neutral elements and spellings rules like
        k = b.rng.randrange(3)
        if k == 0:
            return b.fn(operator.mul, x, 1.0)
        if k == 1:
            return b.meth("exp", b.fn(torch.tanh, x))
        return b.fn(torch.add, x, b.pick())
    return b.meth("squeeze", b.meth("unsqueeze", x, 0), 0)


def random_graph(n_ops: int, seed: int = 0, n_inputs: int = 4) -> tuple[torch.fx.GraphModule, list[torch.Tensor]]:
    """An FX GraphModule with exactly `n_ops` call nodes (every one reachable from the output),
    and example inputs for it."""
    b = _Builder(seed)
    for i in range(n_inputs):
        b.placeholder(f"x{i}")
    while b.ops < n_ops:
        b.pool.append(_step(b, n_ops - b.ops))
    # Output every node nobody uses, so that all ops are reachable.
    dead = [n for n in b.g.nodes if n.op in ("call_function", "call_method") and not n.users]
    b.g.output(tuple(dead))
    b.g.lint()
    return torch.fx.GraphModule(torch.nn.Module(), b.g), b.inputs


def run_graph(gm: torch.fx.GraphModule, inputs) -> tuple:
    with torch.no_grad():
        out = gm(*inputs)
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)

"""Backward-only fault backends that test training mode: the forward runs exactly as AOTAutograd traced it, the backward is wrong in one place.

Use as `eqsat-test MODEL.py --grad --backend examples/backends/grad_faulty_backends.py:grad_scaled` (any
name in FAULTS). Each is `aot_autograd(fw_compiler=..., bw_compiler=...)`: the forward graph runs
unchanged (boxed, as aot_eager runs it), and the backward graph, as the partitioner handed it over,
is changed before it runs. `FIRED` records, per backward graph compiled, whether the fault found
something to change.

What the oracle must say in training mode (tests, benchmarks/grad_detection.py):
- identity: plain AOTAutograd with nop compilers (aot_eager): nothing; never flagged.
- grad_scaled: the first gradient the backward returns times 1.001: flagged.
- grad_zeroed: the last gradient the backward returns set to zero: flagged.
- grad_negated: the first gradient the backward returns negated: flagged.
- grad_one_element: one element (the middle one) of the first gradient times 1.01: flagged.
- saved_bf16: the first floating saved activation (a backward input that is no tangent) rounded
  to bfloat16 before the backward reads it, as a partitioner that saves in low precision: flagged.
- saved_shifted: the first floating saved activation of rank >= 1 rolled by one element along its
  last dimension before the backward reads it, as a recomputation that reads the wrong offset: flagged.
Every forward is left exact: in training mode the forward outputs agree, so each finding is a
grad-miscompile.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.fx
from torch._dynamo.backends.common import aot_autograd
from torch._dynamo.backends.debugging import boxed_nop
from torch._functorch.partitioners import min_cut_rematerialization_partition

__all__ = ["FAULTS", "FIRED", "identity", "grad_scaled", "grad_zeroed", "grad_negated", "grad_one_element",
           "saved_bf16", "saved_shifted"]

FIRED: list[bool] = []


def _float_val(n: torch.fx.Node, min_rank: int = 0) -> bool:
    v = n.meta.get("val")
    return isinstance(v, torch.Tensor) and v.is_floating_point() and v.dim() >= min_rank and v.numel() > 0


def _output_grads(gm: torch.fx.GraphModule) -> tuple[torch.fx.Node, list]:
    out = next(n for n in gm.graph.nodes if n.op == "output")
    return out, list(out.args[0])


def _on_output(change: Callable, last: bool = False) -> Callable:
    """A backward-graph edit: `change(graph, node)` applied to the first (or last) floating gradient returned."""
    def edit(gm: torch.fx.GraphModule) -> bool:
        out, grads = _output_grads(gm)
        cand = [k for k, g in enumerate(grads) if isinstance(g, torch.fx.Node) and _float_val(g)]
        if not cand:
            return False
        k = cand[-1] if last else cand[0]
        with gm.graph.inserting_before(out):
            grads[k] = change(gm.graph, grads[k])
        out.args = (type(out.args[0])(grads),)
        return True
    return edit


def _on_saved(change: Callable, min_rank: int = 0) -> Callable:
    """A backward-graph edit: every use of the first floating saved activation (a placeholder that is
    no tangent) reads `change(graph, placeholder)` instead."""
    def edit(gm: torch.fx.GraphModule) -> bool:
        saved = [n for n in gm.graph.nodes if n.op == "placeholder" and not n.name.startswith("tangents")
                 and _float_val(n, min_rank) and n.users]
        if not saved:
            return False
        p = saved[0]
        first = next(n for n in gm.graph.nodes if n.op != "placeholder")
        with gm.graph.inserting_before(first):
            new = change(gm.graph, p)
        p.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new and u not in _made(new, p))
        return True
    return edit


def _made(node: torch.fx.Node, stop: torch.fx.Node) -> set:
    """The nodes between `stop` and `node` (the change's own nodes, which must keep reading `stop`)."""
    seen, todo = set(), [node]
    while todo:
        n = todo.pop()
        if n in seen or n is stop:
            continue
        seen.add(n)
        todo.extend(a for a in n.all_input_nodes)
    return seen


def _scale(factor: float) -> Callable:
    return lambda g, n: g.call_function(torch.ops.aten.mul.Tensor, (n, factor))


def _one_element(g: torch.fx.Graph, n: torch.fx.Node) -> torch.fx.Node:
    def bump(t: torch.Tensor) -> torch.Tensor:
        t = t.clone()
        flat = t.view(-1)
        flat[flat.numel() // 2] *= 1.01
        return t
    return g.call_function(bump, (n,))


def _bf16(g: torch.fx.Graph, n: torch.fx.Node) -> torch.fx.Node:
    low = g.call_function(torch.ops.prims.convert_element_type.default, (n, torch.bfloat16))
    return g.call_function(torch.ops.prims.convert_element_type.default, (low, n.meta["val"].dtype))


def _shift(g: torch.fx.Graph, n: torch.fx.Node) -> torch.fx.Node:
    return g.call_function(torch.ops.aten.roll.default, (n, [1], [-1]))


def _backend(edit: Callable | None) -> Callable:
    def bw_compiler(gm: torch.fx.GraphModule, example_inputs):
        if edit is not None:
            FIRED.append(bool(edit(gm)))
            gm.graph.lint()
            gm.recompile()
        return boxed_nop(gm, example_inputs)
    return aot_autograd(fw_compiler=boxed_nop, bw_compiler=bw_compiler,
                        partition_fn=min_cut_rematerialization_partition, keep_inference_input_mutations=True)


identity = _backend(None)
grad_scaled = _backend(_on_output(_scale(1.001)))
grad_zeroed = _backend(_on_output(_scale(0.0), last=True))
grad_negated = _backend(_on_output(_scale(-1.0)))
grad_one_element = _backend(_on_output(_one_element))
saved_bf16 = _backend(_on_saved(_bf16))
saved_shifted = _backend(_on_saved(_shift, min_rank=1))

FAULTS = {"grad_scaled": grad_scaled, "grad_zeroed": grad_zeroed, "grad_negated": grad_negated,
          "grad_one_element": grad_one_element, "saved_bf16": saved_bf16, "saved_shifted": saved_shifted}

"""The minimizer's moves, on the program IR (lowering/program.py): pure functions Program -> Program.

- `keep_outputs`: keep some items of the output sequence;
- `cut_at`: return an earlier value instead (what only fed later values dies);
- `bypass`: replace every use of an op's result by another value of the same shape and dtype
  (one of the op's own tensor operands, or an input); `bypass_choices` proposes those;
- `compact`: drop the nodes neither the output nor an in-place write reaches (input nodes are kept: they
  cost nothing, and later bypasses may use them).

Every move returns a compacted program whose nodes keep their original relative order, so a
rendered candidate reads like the module it came from. `value_meta` gives the shape and dtype of
every tensor value: Program.meta where generation recorded it, else one eager run here on CPU.
"""
from __future__ import annotations

import torch
import torch.fx

from eqsat_test.lowering.lower import to_fx
from eqsat_test.lowering.program import CALL, INPUT, SEQ, PNode, Program, ProgramBuilder, TensorMeta, dtype_name
from eqsat_test.runners.protocol import reseed


def _deps(n: PNode) -> list[int]:
    return [*n.args, *(v for _, v in n.kwargs)]


def _rebuild(p: Program, output: int, subst: dict[int, int] | None = None) -> Program:
    """The nodes reachable from `output` with every use of a key of `subst` replaced by its value
    (followed through chains), plus every input node. A substitute must be an input or an
    earlier node, so ordering inputs first and the rest by index is topological."""
    subst = subst or {}

    def res(i: int) -> int:
        seen = set()
        while i in subst and i not in seen:
            seen.add(i)
            i = subst[i]
        return i

    for k in subst:
        t = res(k)
        if t > k and p.nodes[t].kind != INPUT:
            raise ValueError(f"node {k} cannot be replaced by later node {t}")
    keep: set[int] = set()
    stack = [res(output), *(i for i in p.effects() if i not in subst)]  # in-place writes are kept like outputs
    while stack:
        i = stack.pop()
        if i in keep:
            continue
        keep.add(i)
        stack.extend(res(a) for a in _deps(p.nodes[i]))
    keep.update(i for i, n in enumerate(p.nodes) if n.kind == INPUT)
    order = sorted(keep, key=lambda i: (p.nodes[i].kind != INPUT, i))
    b = ProgramBuilder()
    new: dict[int, int] = {}
    for i in order:
        n = p.nodes[i]
        node = PNode(n.kind, n.name, tuple(new[res(a)] for a in n.args),
                     tuple((k, new[res(v)]) for k, v in n.kwargs))
        new[i] = b.add(node, p.meta[i] if i < len(p.meta) else None)
    return b.build(new[res(output)])


def compact(p: Program) -> Program:
    return _rebuild(p, p.output)


def output_items(p: Program) -> tuple[int, ...]:
    return p.nodes[p.output].args


def _with_output(p: Program, items: list[int]) -> Program:
    """`p` returning `items` (in the output sequence's own container kind), compacted."""
    kind = p.nodes[p.output].name
    nodes = p.nodes + (PNode(SEQ, kind, tuple(items)),)
    meta = tuple(p.meta) + (None,) if p.meta else ()
    return compact(Program(nodes, len(p.nodes), meta))


def keep_outputs(p: Program, idx: list[int]) -> Program:
    items = output_items(p)
    return _with_output(p, [items[i] for i in idx])


def cut_at(p: Program, node: int) -> Program:
    return _with_output(p, [node])


def bypass(p: Program, mapping: dict[int, int]) -> Program:
    """Every use of a key replaced by its value (through chains); what then feeds nothing dies."""
    return _rebuild(p, p.output, mapping)


def tensor_operands(p: Program, i: int) -> list[int]:
    """The values a call reads, through argument lists and tuples (not through other calls)."""
    out: list[int] = []
    stack = list(reversed(_deps(p.nodes[i])))
    while stack:
        j = stack.pop()
        n = p.nodes[j]
        if n.kind == SEQ:
            stack.extend(reversed(n.args))
        elif n.kind in (CALL, INPUT) and j not in out:
            out.append(j)
    return out


def bypass_choices(p: Program, meta: dict[int, TensorMeta], input_order: list[str] | None = None) -> dict[int, int]:
    """op node -> a value of the same shape and dtype to use instead: one of its own tensor
    operands (the op is skipped), else the first such input (the op and what feeds it die)."""
    order = {name: k for k, name in enumerate(input_order or ())}
    inputs = sorted((i for i, n in enumerate(p.nodes) if n.kind == INPUT),
                    key=lambda i: (order.get(p.nodes[i].name, len(order)), i))
    out: dict[int, int] = {}
    for i in p.reachable():
        m = meta.get(i)
        if p.nodes[i].kind != CALL or m is None:
            continue
        same = [a for a in tensor_operands(p, i) if meta.get(a) == m]
        same = same or [j for j in inputs if meta.get(j) == m]
        if same:
            out[i] = same[0]
    return out


def cut_points(p: Program, meta: dict[int, TensorMeta]) -> list[int]:
    """Tensor-valued op nodes that are not already returned, in program order."""
    returned = set(output_items(p))
    return [i for i in p.reachable() if p.nodes[i].kind == CALL and i in meta and i not in returned]


def with_meta(p: Program, meta: dict[int, TensorMeta]) -> Program:
    """`p` with `meta` as its Program.meta (the moves carry Program.meta along to their results)."""
    return Program(p.nodes, p.output, tuple(meta.get(i) for i in range(len(p.nodes))))


def meta_of(p: Program) -> dict[int, TensorMeta]:
    return {i: m for i, m in enumerate(p.meta) if m is not None}


def label(p: Program, i: int) -> str:
    """A short name for node i in messages: `relu#4`."""
    return f"{p.nodes[i].name.rsplit('.', 1)[-1]}#{i}"


class _Recorder(torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.values: list[object] = []

    def run_node(self, n: torch.fx.Node):
        v = super().run_node(n)
        if n.op in ("call_function", "call_method"):
            self.values.append(v)
        return v


def value_meta(p: Program, input_names: list[str] | tuple[str, ...], inputs: list) -> dict[int, TensorMeta]:
    """node index -> TensorMeta of every tensor-valued input and call of `p`: from `p.meta` where
    every call has one, else from one eager run of the lowered program on `inputs` (CPU).
    Raises whatever the eager run raises."""
    def of(v) -> TensorMeta | None:
        return TensorMeta(tuple(v.shape), dtype_name(v.dtype)) if isinstance(v, torch.Tensor) else None

    meta: dict[int, TensorMeta] = {}
    by_name = dict(zip(input_names, inputs))
    for i, n in enumerate(p.nodes):
        m = (p.meta[i] if i < len(p.meta) else None) or (of(by_name.get(n.name)) if n.kind == INPUT else None)
        if m is not None:
            meta[i] = m
    calls = [i for i, n in enumerate(p.nodes) if n.kind == CALL]
    if all(i in meta for i in calls):
        return meta
    rec = _Recorder(to_fx(p, input_names))
    reseed()
    with torch.no_grad():
        rec.run(*inputs)
    if len(rec.values) != len(calls):  # to_fx makes one FX call node per call node, in index order
        raise ValueError(f"{len(rec.values)} FX calls for {len(calls)} program calls")
    for i, v in zip(calls, rec.values):
        m = of(v)
        if m is not None:
            meta[i] = m
        else:
            meta.pop(i, None)
    return meta

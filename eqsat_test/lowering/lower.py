"""Lower a program (an extracted variant) back to a runnable torch.fx graph."""
from __future__ import annotations

import torch
import torch.fx

from eqsat_test.lowering.program import CALL, INPUT, LIT, SEQ, UID_KW, Program, lit_value
from eqsat_test.lowering.targets import resolve


def to_fx(program: Program, input_names: tuple[str, ...] | list[str]) -> torch.fx.GraphModule:
    """An FX GraphModule whose forward takes `input_names` in order and returns the output tuple."""
    return torch.fx.GraphModule(torch.nn.Module(), to_graph(program, input_names))


def to_graph(program: Program, input_names: tuple[str, ...] | list[str]) -> torch.fx.Graph:
    """The FX graph of `to_fx`, without the module around it (rendering source needs the graph alone; making
    the module generates and compiles its Python code, ~40% of rendering a variant)."""
    g = torch.fx.Graph()
    env: dict[int, object] = {}
    by_name = {n.name: i for i, n in enumerate(program.nodes) if n.kind == INPUT}
    for name in input_names:
        ph = g.placeholder(name)
        if name in by_name:
            env[by_name[name]] = ph
    missing = set(by_name) - set(input_names)
    if missing:
        raise ValueError(f"program uses inputs {sorted(missing)} that are not among the graph inputs")

    def val(i: int):
        if i in env:
            return env[i]
        n = program.nodes[i]
        if n.kind == LIT:
            v = lit_value(n.name)
        elif n.kind == SEQ:
            items = [val(a) for a in n.args]
            v = items if n.name == "list" else slice(*items) if n.name == "slice" else tuple(items)
        elif n.kind == CALL:
            args = tuple(val(a) for a in n.args)
            kwargs = {k: val(v) for k, v in n.kwargs if k != UID_KW}
            if n.name.startswith("Tensor."):
                v = g.call_method(n.name.removeprefix("Tensor."), args, kwargs)
            else:
                v = g.call_function(resolve(n.name), args, kwargs)
        else:
            raise ValueError(f"unknown node kind {n.kind}")
        env[i] = v
        return v

    for i in range(len(program.nodes)):  # every node: in-place ops matter even when unreferenced
        val(i)
    g.output(val(program.output))
    g.lint()
    return g


def largest_value(program: Program, input_names: tuple[str, ...] | list[str], inputs) -> int | None:
    """The most elements any value of `program` holds, run on fake copies of `inputs` (shapes only, no data, no
    kernel); None where the fake run fails (an op without a fake kernel, a data-dependent shape)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    largest = 0

    class Sizes(torch.fx.Interpreter):
        def run_node(self, n):
            nonlocal largest
            out = super().run_node(n)
            for t in torch.utils._pytree.tree_leaves(out):
                if isinstance(t, torch.Tensor):
                    largest = max(largest, t.numel())
            return out

    try:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            fakes = [mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs]
            with torch.no_grad():
                Sizes(to_fx(program, input_names)).run(*fakes)
    except Exception:  # noqa: BLE001 - no fake run: no bound from it
        return None
    return largest

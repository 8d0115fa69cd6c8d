"""Capture a module's torch-level FX graph(s) with Dynamo, each with the real inputs it received."""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.fx

from eqsat_test.lowering.load import BadInput, one_line


@dataclass(frozen=True)
class CapturedGraph:
    """One Dynamo graph: the FX module, the inputs it was called with (placeholders in order,
    then get_attr constants), and which of those are parameters or buffers."""

    index: int
    gm: torch.fx.GraphModule
    inputs: tuple
    input_names: tuple[str, ...]
    is_param: tuple[bool, ...]
    writes: tuple[str, ...] = ()  # the placeholders the graph wrote in place when it ran (an input, a buffer)


class CaptureCrash(Exception):
    """The model runs eagerly and torch.compile raises while Dynamo traces it: a finding (capture-crash), not bad
    input. `error` is what Dynamo raised."""

    def __init__(self, message: str, error: BaseException) -> None:
        super().__init__(message)
        self.error = error


def _placeholder_is_param(name: str) -> bool:
    return "_parameters_" in name or "_buffers_" in name or name.startswith(("L_self_", "l_self_"))


# Calls that only record telemetry and compute nothing: Dynamo keeps some in the graph on some torch versions
# (torch._C._log_api_usage_once, which torchvision and transformers call; torch 2.11 keeps it), and their target
# has no importable name of its own. Dropped where nothing reads their result.
TELEMETRY = (torch._C._log_api_usage_once,)


def _drop_telemetry(gm: torch.fx.GraphModule) -> None:
    dropped = False
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and n.target in TELEMETRY and not n.users:
            gm.graph.erase_node(n)
            dropped = True
    if dropped:
        gm.recompile()


def capture(module, inputs: tuple, *, dynamic: bool = False) -> list[CapturedGraph]:
    """Run `module(*inputs)` under Dynamo with a recording backend; graph breaks give several
    graphs, each kept with the inputs it actually received."""
    records: list[tuple[torch.fx.GraphModule, tuple, set]] = []

    def backend(gm: torch.fx.GraphModule, example_inputs):
        real = tuple(x.detach().clone() if isinstance(x, torch.Tensor) else x for x in example_inputs)
        kept = copy.deepcopy(gm)
        _drop_telemetry(kept)
        written: set[int] = set()
        records.append((kept, real, written))

        def run(*args):  # the graph as Dynamo calls it: an argument whose version counter moves was written
            before = [a._version if isinstance(a, torch.Tensor) else None for a in args]
            out = gm.forward(*args)
            written.update(i for i, (a, v) in enumerate(zip(args, before))
                           if v is not None and a._version != v)
            return out
        return run

    torch._dynamo.reset()
    try:
        with torch.no_grad():
            torch.compile(module, backend=backend, dynamic=dynamic)(*inputs)
    except torch._dynamo.exc.BackendCompilerFailed as e:  # the recording backend's own failure: eqsat-test's
        raise RuntimeError(f"capture: recording a graph failed: {one_line(e)}") from e
    except Exception as e:  # the model ran eagerly (load_model checked): torch.compile itself fails on it
        raise CaptureCrash(f"torch.compile raises while Dynamo traces the model: {one_line(e)}", e) from e
    finally:
        torch._dynamo.reset()
    graphs = []
    for i, (gm, real, written) in enumerate(records):
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        if len(names) != len(real):
            raise BadInput(f"capture: graph {i} has {len(names)} placeholders but received "
                           f"{len(real)} inputs (symbolic shapes are not supported; use static shapes)")
        targets = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
        graphs.append(CapturedGraph(
            index=i, gm=gm, inputs=real, input_names=tuple(names),
            is_param=tuple(_placeholder_is_param(str(t)) for t in targets),
            writes=tuple(names[k] for k in sorted(written)),
        ))
    if not graphs:
        raise BadInput("capture: Dynamo produced no graph (the model computes nothing with tensors?)")
    return graphs

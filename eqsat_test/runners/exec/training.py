"""Training mode in the worker: a variant run as a training step (forward and backward, runners/oracle/grad.py), its verdict split into forward and gradient, and the stage a failing gradient comes from.

A task with `"grad": true` runs `GradProgram(mod.forward)` eagerly (twice, and in float64) and
`GradProgram(torch.compile(mod.forward))` compiled, with Inductor's `fallback_random` on (eager's
generator for random ops). The judge sees (outputs, gradients); a failing verdict names its part:
"forward" (an output: kind miscompile, as in inference mode) or "gradient" (the outputs agree and a
gradient does not: grad-miscompile). A program that draws random numbers is judged only where its
compiled forward agrees with eager's: otherwise the two drew different numbers, and it is not judged.

The stage of a failing gradient (`backward_stage`), by the backends torch ships, on the same input set:
- "aot-autograd": aot_eager (AOTAutograd's joint graph and partitioner, ATen run eagerly) differs already;
- "decompositions-partitioner": aot_eager agrees, aot_eager_decomp_partition (Inductor's decompositions
  and min-cut partitioner, run eagerly) differs;
- "inductor-backward": both agree and Inductor's backward kernels, run after Inductor's forward, differ;
  "inductor-forward-saved": Inductor's forward with an eager backward differs already (a saved
  activation the compiled forward computed wrong, the outputs right);
- "backend": a backend of the user's own (FILE.py:FN) whose compilers come after AOTAutograd;
- None: not told (a stage's run raised).
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable

import torch

from eqsat_test.runners.oracle.grad import (
    GradProgram,
    grad_index_sources,
    input_of,
    is_random,
    part_of,
    random_stream,
    refused_inputs,
    written_inputs,
)
from eqsat_test.runners.oracle.judge import Verdict
from eqsat_test.runners.oracle.reference import EagerRef, judge_against
from eqsat_test.runners.protocol import call_compiled, compile_options, reseed

STAGES = ("aot-autograd", "decompositions-partitioner", "inductor-forward-saved", "inductor-backward", "backend")


@dataclasses.dataclass(frozen=True)
class Training:
    """A variant module as a training step: the step, its index sources, the inputs it does not
    differentiate (written into), whether it draws random numbers, and its input names."""

    step: GradProgram
    index_sources: Callable
    random: bool
    names: tuple

    def compiled(self, fn: Callable) -> GradProgram:
        return GradProgram(fn, self.step.skip)


def training(mod, inputs) -> Training:
    """The training step of variant module `mod`, probed on `inputs` (on the task's device): the inputs it
    writes into and those an op refuses to differentiate are left out of the gradients."""
    skip = written_inputs(mod.forward, inputs)
    skip += refused_inputs(mod.forward, inputs, skip)
    return Training(GradProgram(mod.forward, skip), grad_index_sources(mod.index_sources),
                    is_random(mod.forward, inputs), tuple(getattr(mod, "INPUT_NAMES", ()) or ()))


def compile_context(backend: str):
    """What a training-mode compile runs under: Inductor draws random numbers with eager's generator."""
    if not str(backend).startswith("inductor"):
        return contextlib.nullcontext()
    import torch._inductor.config as inductor_config
    return inductor_config.patch(fallback_random=True)


def judge_step(r: EagerRef, got: Any, t: Training) -> tuple[Verdict, dict]:
    """The verdict on one input set and what the worker adds to its entry: `part` (forward |
    gradient) of a failing verdict, and the input whose gradient failed (`grad_input`)."""
    v = random_stream(judge_against(r, got), t.random, r.origins)  # the compiled code may have drawn other numbers
    if v.ok:
        return v, {}
    extra: dict = {"part": part_of(v.leaf)}
    k = input_of(v.leaf)
    if k is not None:
        extra["grad_input"] = t.names[k] if k < len(t.names) else f"input {k}"
        v = dataclasses.replace(v, detail=f"gradient of {extra['grad_input']}: {v.detail}")
    return v, extra


def _agrees(fn: Callable, r: EagerRef, t: Training, opts: dict) -> bool:
    torch._dynamo.reset()
    reseed()
    with torch.no_grad():
        got = call_compiled(t.compiled(fn), r.set.inputs, opts)
    return judge_against(r, got).ok


def _inductor_forward_only(gm, example_inputs):
    """Inductor's forward, decompositions and partitioner, the backward graph run eagerly."""
    from torch._dynamo.backends.debugging import boxed_nop
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    def inner(g, ex, **kw):
        return boxed_nop(g, ex) if kw.get("is_backward") else compile_fx_inner(g, ex, **kw)
    return compile_fx(gm, example_inputs, inner_compile=inner)


def backward_stage(forward: Callable, r: EagerRef, t: Training, backend: str) -> str | None:
    """The stage a failing gradient comes from (module docstring), on the failing input set `r`."""
    import torch._inductor.config as inductor_config
    try:
        if not _agrees(torch.compile(forward, backend="aot_eager"), r, t, {}):
            return "aot-autograd"
        name, opts = compile_options(backend)
        if name != "inductor":
            return "backend"
        with compile_context(backend):
            if not _agrees(torch.compile(forward, backend="aot_eager_decomp_partition"), r, t, {}):
                return "decompositions-partitioner"
            with inductor_config.patch(opts.get("options") or {}):  # the run's Inductor options, as its compile had
                if not _agrees(torch.compile(forward, backend=_inductor_forward_only, dynamic=opts.get("dynamic")),
                               r, t, {}):
                    return "inductor-forward-saved"
        return "inductor-backward"
    except Exception:  # noqa: BLE001 - a stage that does not run tells nothing
        return None
    finally:
        torch._dynamo.reset()

"""Training mode's program: the forward, then the backward from a fixed random cotangent per output leaf; its outputs and the gradient of every floating input are what the judge sees.

A program `forward(*inputs)` (a variant module's, or its compiled form) becomes
`step(*inputs) -> (outputs, grads)`: each floating input (inputs and parameters alike: a variant
takes both as arguments) is copied into a fresh leaf that requires grad, the forward runs with
grad enabled, and `torch.autograd.grad` runs the backward from one cotangent per differentiable
output leaf. `grads[k]` is the gradient of input k (zeros where the outputs do not depend on it;
None for an input that is not differentiated: an integer or bool input, or one the program
writes into, as BatchNorm's running statistics in training mode).

The cotangents are random (a plain `.sum()`, whose cotangent is all ones, hides a gradient that
is negated in one place and compensated in another, or permuted), drawn from a generator seeded
by the leaf's position, and rounded to bfloat16's precision so that one value is exact in every
floating dtype: the fp64 run differentiates with the very cotangent eager and compiled got.

Every call starts from torch.manual_seed(seed): a program that draws random numbers (dropout,
BatchNorm in training mode is not one) draws the same numbers eager, in its fp64 run and
compiled, where the compiled code draws them with eager's generator (Inductor's
`fallback_random`, which the worker sets in training mode). Where a random program's compiled
forward still disagrees, the streams differ: not judged (`random_stream`, the oracle rule
`training.random-stream`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch.utils._python_dispatch import _disable_current_modes
from torch.utils._pytree import tree_flatten, tree_map

from eqsat_test.runners.oracle.engine import Hit, apply, behaviour
from eqsat_test.runners.oracle.rules import TRAINING
from eqsat_test.runners.oracle.verdict import NONDETERMINISTIC, Verdict
from eqsat_test.runners.protocol import reseed

GRAD_SEED = 0  # torch.manual_seed at the start of every step
COTANGENT_SEED = 0x6AD  # the cotangent of output leaf k comes from a generator seeded COTANGENT_SEED + k
OUTPUTS, GRADS = "[0]", "[1]"  # the judge's leaf paths: outputs under [0], the gradient of input k under [1][k]


def cotangent(leaf: torch.Tensor, k: int) -> torch.Tensor:
    """The cotangent of differentiable output leaf k: standard normal values rounded to bfloat16's
    precision (exact in float16, bfloat16, float32 and float64), drawn on the CPU and moved."""
    with _disable_current_modes():  # made outside the oracle's dispatch modes: no rounding noise, no dtype recorded
        gen = torch.Generator().manual_seed(COTANGENT_SEED + k)
        values = torch.randn(tuple(leaf.shape), generator=gen, dtype=torch.float64).to(torch.bfloat16)
        return values.to(dtype=leaf.dtype, device=leaf.device)


def differentiable(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and (x.is_floating_point() or x.is_complex())


def written_inputs(forward: Callable, inputs) -> tuple[int, ...]:
    """The positions of the inputs that `forward` writes into (their version counters move, or their
    values change, when it runs once on copies, without grad): they are not differentiated (a leaf that requires grad
    refuses in-place writes), as a training step does not differentiate BatchNorm's running stats."""
    copies = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    before = [(x._version, x.clone()) if isinstance(x, torch.Tensor) else None for x in copies]
    reseed(GRAD_SEED)
    with torch.no_grad():
        forward(*copies)

    def written(x, b) -> bool:  # (a kernel may write through the data pointer: BatchNorm's running stats)
        return x._version != b[0] or not bool(((x == b[1]) | (x != x) & (b[1] != b[1])).all())
    return tuple(k for k, (x, b) in enumerate(zip(copies, before)) if isinstance(x, torch.Tensor) and written(x, b))


_REFUSES = "is not differentiable with respect to argument"  # an op's refusal of an input that requires grad


def refused_inputs(forward: Callable, inputs, skip: tuple[int, ...] = ()) -> tuple[int, ...]:
    """The positions of the inputs an op refuses to take with requires_grad (binary_cross_entropy_with_logits'
    pos_weight, batch_norm's running stats): each tried alone, only where the forward refuses them all."""
    def refuses(ks) -> bool:
        xs = [x.detach().clone().requires_grad_(True) if k in ks else x for k, x in enumerate(inputs)]
        reseed(GRAD_SEED)
        try:
            with torch.enable_grad():
                forward(*xs)
        except RuntimeError as e:
            if _REFUSES in str(e):
                return True
            raise
        return False
    cand = [k for k, x in enumerate(inputs) if differentiable(x) and k not in skip]
    try:
        if not cand or not refuses(set(cand)):
            return ()
        return tuple(k for k in cand if refuses({k}))
    except Exception:  # noqa: BLE001 - the forward fails otherwise: the eager run reports it
        return ()


@dataclasses.dataclass(frozen=True)
class GradProgram:
    """`forward` as a training step (the module docstring); `skip`: input positions not differentiated
    besides the non-floating ones (written_inputs)."""

    forward: Callable
    skip: tuple[int, ...] = ()
    seed: int = GRAD_SEED

    def __call__(self, *inputs) -> tuple[Any, tuple]:
        reseed(self.seed)
        xs, wrt = [], []
        for k, x in enumerate(inputs):
            if differentiable(x) and k not in self.skip:
                x = x.detach().clone().requires_grad_(True)
                wrt.append(k)
            xs.append(x)
        with torch.enable_grad():
            out = self.forward(*xs)
            flat, _ = tree_flatten(out)
            diff = [(k, t) for k, t in enumerate(flat) if isinstance(t, torch.Tensor) and t.requires_grad]
            got: tuple = ()
            if diff and wrt:
                got = torch.autograd.grad([t for _, t in diff], [xs[k] for k in wrt],
                                          [cotangent(t, k) for k, t in diff], allow_unused=True)
        grads: list = [None] * len(xs)
        for k, g in zip(wrt, got or (None,) * len(wrt)):
            grads[k] = torch.zeros_like(xs[k]) if g is None else g.detach()
        return tree_map(lambda t: t.detach() if isinstance(t, torch.Tensor) else t, out), tuple(grads)


def grad_index_sources(index_sources: Callable) -> Callable:
    """A variant's index_sources for its training step: the same index outputs, under OUTPUTS."""
    def sources(*inputs) -> dict:
        with torch.no_grad():
            return {OUTPUTS + path: src for path, src in index_sources(*inputs).items()}
    return sources


def is_random(forward: Callable, inputs) -> bool:
    """Whether two runs of the forward, not reseeded between them, differ (NaN == NaN): the program
    draws random numbers (its training step reseeds, so its two eager runs agree)."""
    def copies() -> list:  # (a program may write into its inputs)
        return [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    with torch.no_grad():
        reseed(GRAD_SEED)
        a = forward(*copies())
        b = forward(*copies())
    fa, fb = tree_flatten(a)[0], tree_flatten(b)[0]
    for x, y in zip(fa, fb):
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or not bool(((x == y) | (x != x) & (y != y)).all()):
                return True
        elif x != y and not (x != x and y != y):
            return True
    return False


@dataclass(frozen=True)
class TrainingStep:
    """A training step's verdict as the TRAINING rules see it: the verdict, whether the program draws random
    numbers (is_random), and the eager run's record (runs.EagerOrigin per leaf path; None: not known)."""

    v: Verdict
    random: bool
    origins: Mapping[str, Any] | None


@behaviour("training.random-stream")
def training_random_stream(x: TrainingStep, _pending) -> Hit | None:
    v = x.v
    if v.ok or not x.random or part_of(v.leaf) != "forward":
        return None
    origin = x.origins.get(v.leaf) if x.origins is not None and v.leaf is not None else None
    if origin is not None and not origin.random:  # the judge names such a leaf first
        return None
    return Hit(torch.ones((), dtype=torch.bool),
               lambda n: "nondeterministic, not judged: a program that draws random numbers, whose compiled forward "
                         f"disagrees with eager's under the same seed (other random numbers): {v.detail}")


def random_stream(v: Verdict, random: bool, origins: Mapping[str, Any] | None = None) -> Verdict:
    """A training step's verdict `v`, or, for a program that draws random numbers whose compiled outputs
    disagree with eager's, that verdict not judged (the TRAINING rules: `training.random-stream`). `origins` (the
    eager run's, runs.EagerOrigin per leaf path): a failing leaf that depends on no random draw is judged all the
    same."""
    out = apply(TRAINING, TrainingStep(v, random, origins))
    if "training.random-stream" not in out.cleared or v.leaf is None:
        return v
    return dataclasses.replace(v, ok=True, kind=NONDETERMINISTIC, detail=out.notes[0]).with_counts(v.leaf, out.counts)


def part_of(leaf: str | None) -> str | None:
    """Which part of a training step a failing leaf path is in: "forward" or "gradient" (None: neither)."""
    if leaf is None:
        return None
    return "gradient" if leaf.startswith(GRADS) else "forward" if leaf.startswith(OUTPUTS) else None


def input_of(leaf: str | None) -> int | None:
    """The input position k of a gradient leaf path "[1][k]..." (None for any other path)."""
    if not leaf or not leaf.startswith(GRADS + "["):
        return None
    head = leaf[len(GRADS) + 1:].split("]", 1)[0]
    return int(head) if head.isdigit() else None

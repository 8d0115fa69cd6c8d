"""Fault-injecting torch.compile backends that test the oracle: each runs the captured graph and corrupts its output in one way.

Use as `eqsat-test MODEL.py --backend examples/backends/faulty_backends.py:one_wrong_element` (any name
in FAULTS), or call them in-process: `torch.compile(fn, backend=one_wrong_element)`. Each
backend takes (gm, example_inputs) like any torch.compile backend and returns a callable that
runs the graph (eagerly: `gm.forward`; pass `inner=` to `make_faulty` to wrap another compiler)
and then corrupts the flat list of outputs Dynamo gets back. `FIRED` records, per call, whether
the fault changed anything (a fault that finds nothing to corrupt, e.g. `nan_to_zero` on an
output without NaN, leaves the output as it was): benchmarks/oracle_detection.py uses it.

What the oracle must say (tests/unit/runners/oracle/test_faults.py, benchmarks/oracle_detection.py):
- identity: nothing; never flagged.
- one_wrong_element: the element at the middle of the first floating output (or the first
  finite nonzero one after it) times (1 + 1e-2): flagged (one element of 2**20 is enough).
- small_doubled: every finite nonzero element of magnitude below 1e-4 doubled: flagged.
- argmax_off_by_one: the first element of the first integer output moved by one (down, or up
  from 0): flagged unless it lands on an exact (or 2-eps) tie of the values it selects.
- nan_to_zero: NaN turned into 0 in floating outputs: flagged where eager and fp64 are NaN.
- inf_sign_flip: +inf <-> -inf in floating outputs: flagged where eager and fp64 agree on it.
- wrong_dtype: the first floating output returned in float64 (float32 if already float64):
  a structure mismatch.
- transposed_stride: every output of rank >= 2 returned as a transposed view of a transposed
  copy (same values, column-major strides): the values agree, so the verdict is a match, with
  a note naming the strides (the oracle reports strides, it does not fail on them).
- writes_lost (not in FAULTS: it changes no output): the graph runs on copies of its inputs, so every
  write to an input is lost, as a compiler that drops an input mutation: flagged on the written input.
- stale_outputs (not in FAULTS: it needs two calls): each call returns the previous call's outputs
  (the first call its own), as a CUDA-graph replay that hands back a buffer an earlier call filled:
  flagged as compiled-nondeterministic (two calls on the same inputs differ, one is wrong).
"""

from __future__ import annotations

import torch

__all__ = ["FAULTS", "FIRED", "make_faulty", "identity", "one_wrong_element", "small_doubled", "argmax_off_by_one",
           "nan_to_zero", "inf_sign_flip", "wrong_dtype", "transposed_stride", "writes_lost", "stale_outputs"]

FIRED: list[bool] = []  # one entry per call of a faulty compiled graph: did the fault change the output?

SMALL = 1e-4  # small_doubled: "small magnitude" is below the old oracle's absolute tolerance
RELATIVE = 1e-2  # one_wrong_element: the relative error planted


def _floats(outs: list) -> list[int]:
    return [i for i, t in enumerate(outs) if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()]


def _one_wrong_element(outs: list) -> bool:
    for i in _floats(outs):
        t = outs[i].clone()
        flat = t.view(-1)
        ok = torch.isfinite(flat) & (flat != 0)
        ok[: flat.numel() // 2] = False  # from the middle on
        if not bool(ok.any()):
            ok = torch.isfinite(flat) & (flat != 0)
        if not bool(ok.any()):
            continue
        p = int(ok.nonzero()[0, 0])
        flat[p] = (flat[p].double() * (1 + RELATIVE)).to(t.dtype)
        if bool(flat[p] == outs[i].reshape(-1)[p]):  # a dtype too coarse for 1e-2 (bfloat16): no fault
            return False
        outs[i] = t
        return True
    return False


def _small_doubled(outs: list) -> bool:
    fired = False
    for i in _floats(outs):
        t = outs[i]
        m = torch.isfinite(t) & (t != 0) & (t.abs() < SMALL)
        if bool(m.any()):
            outs[i] = torch.where(m, t * 2, t)
            fired = True
    return fired


def _argmax_off_by_one(outs: list) -> bool:
    for i, t in enumerate(outs):
        if isinstance(t, torch.Tensor) and t.numel() and not (t.is_floating_point() or t.is_complex()) \
                and t.dtype != torch.bool:
            t = t.clone()
            flat = t.view(-1)
            flat[0] = flat[0] - 1 if int(flat[0]) > 0 else flat[0] + 1
            outs[i] = t
            return True
    return False


def _nan_to_zero(outs: list) -> bool:
    fired = False
    for i in _floats(outs):
        t = outs[i]
        m = torch.isnan(t)
        if bool(m.any()):
            outs[i] = torch.where(m, torch.zeros_like(t), t)
            fired = True
    return fired


def _inf_sign_flip(outs: list) -> bool:
    fired = False
    for i in _floats(outs):
        t = outs[i]
        m = torch.isinf(t)
        if bool(m.any()):
            outs[i] = torch.where(m, -t, t)
            fired = True
    return fired


def _wrong_dtype(outs: list) -> bool:
    for i in _floats(outs):
        t = outs[i]
        outs[i] = t.to(torch.float32 if t.dtype == torch.float64 else torch.float64)
        return True
    return False


def _transposed_stride(outs: list) -> bool:
    fired = False
    for i, t in enumerate(outs):
        if isinstance(t, torch.Tensor) and t.dim() >= 2 and t.size(-1) > 1 and t.size(-2) > 1:
            outs[i] = t.transpose(-1, -2).contiguous().transpose(-1, -2)  # same values, column-major
            fired = True
    return fired


def make_faulty(corrupt, name: str, inner=None):
    """A torch.compile backend: run `inner(gm, example_inputs)` (default: the graph itself,
    eagerly) and pass its flat outputs through `corrupt(list) -> fired`."""

    def backend(gm: torch.fx.GraphModule, example_inputs):
        run = inner(gm, example_inputs) if inner is not None else gm.forward

        def faulty(*args):
            out = run(*args)
            single = not isinstance(out, (list, tuple))
            outs = [out] if single else list(out)
            with torch.no_grad():
                FIRED.append(bool(corrupt(outs)))
            if single:
                return outs[0]
            return type(out)(outs) if isinstance(out, tuple) and type(out) is tuple else outs

        return faulty

    backend.__name__ = backend.__qualname__ = name
    return backend


identity = make_faulty(lambda outs: False, "identity")
one_wrong_element = make_faulty(_one_wrong_element, "one_wrong_element")
small_doubled = make_faulty(_small_doubled, "small_doubled")
argmax_off_by_one = make_faulty(_argmax_off_by_one, "argmax_off_by_one")
nan_to_zero = make_faulty(_nan_to_zero, "nan_to_zero")
inf_sign_flip = make_faulty(_inf_sign_flip, "inf_sign_flip")
wrong_dtype = make_faulty(_wrong_dtype, "wrong_dtype")
transposed_stride = make_faulty(_transposed_stride, "transposed_stride")

FAULTS = {b.__name__: b for b in (identity, one_wrong_element, small_doubled, argmax_off_by_one, nan_to_zero,
                                  inf_sign_flip, wrong_dtype, transposed_stride)}


def stale_outputs(gm: torch.fx.GraphModule, example_inputs):
    """Each call returns the outputs of the call before it (the first call its own)."""
    last: list = []

    def stale(*args):
        out = gm.forward(*args)
        prev = last[0] if last else out
        last[:] = [out]
        FIRED.append(prev is not out)
        return prev

    return stale


def writes_lost(gm: torch.fx.GraphModule, example_inputs):
    """The graph on copies of its tensor inputs: its outputs as they should be, its writes to inputs lost."""

    def lost(*args):
        FIRED.append(True)
        return gm.forward(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])

    return lost

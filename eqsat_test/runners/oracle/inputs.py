"""Input sets for a program: the given inputs, fresh random ones of the same shapes, and ones seeded with special values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from eqsat_test.runners.oracle.constants import INDEX_LIKE_MAX, SPECIAL_FRACTION
from eqsat_test.runners.oracle.numerics import special_values

__all__ = ["InputSet", "input_sets", "special_values", "to_fp64_inputs", "SPECIAL_FRACTION", "INDEX_LIKE_MAX"]

_KIND_CODES = {"random": 1, "special": 2}


@dataclass(frozen=True)
class InputSet:
    """One set of inputs to run a program on."""

    name: str  # "given", "random-<seed>", "special-<seed>"
    inputs: tuple  # tensors (and python values passed through unchanged)


def to_fp64_inputs(inputs: Any) -> tuple:
    """Floating tensors to float64 (complex to complex128), detached with requires_grad False; the rest unchanged."""

    def conv(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if x.is_floating_point():
                return x.detach().to(torch.float64)
            if x.is_complex():
                return x.detach().to(torch.complex128)
            return x
        return _map(x, conv)

    return tuple(conv(x) for x in inputs)


def perturbed_fp64_inputs(inputs: Any, delta: float, seed: int = 0) -> tuple:
    """to_fp64_inputs, with every floating element scaled by (1 + delta * r), r uniform in [-1, 1] per
    element (continuous: two equal terms of opposite sign almost never move by the same amount)."""
    gen = torch.Generator().manual_seed(seed)

    def move(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if not (x.is_floating_point() or x.is_complex()):
                return x
            r = torch.rand(x.shape, generator=gen, dtype=torch.float64).mul_(2).sub_(1)
            return x * (1 + delta * r.to(x.device))
        return _map(x, move)

    return tuple(move(x) for x in to_fp64_inputs(inputs))


def flushed_fp64_inputs(inputs: Any, dt: torch.dtype) -> tuple | None:
    """to_fp64_inputs with every floating value below dt's smallest normal flushed to zero (sign kept),
    as a kernel that flushes subnormals (Triton's default on GPUs) reads them; None if there are none."""
    tiny, found = torch.finfo(dt).tiny, []

    def flush(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if not x.is_floating_point():
                return x
            sub = (x != 0) & (x.abs() < tiny)
            found.append(bool(sub.any()))
            return torch.where(sub, x * 0, x)
        return _map(x, flush)

    out = tuple(flush(x) for x in to_fp64_inputs(inputs))
    return out if any(found) else None


def input_sets(
    base: list | tuple,
    *,
    is_param: list[bool] | None = None,
    seed: int = 0,
    kinds: tuple[str, ...] | list[str] = ("given", "random", "special"),
) -> list[InputSet]:
    """The input sets of a program, in the order of `kinds`.

    "given": base unchanged (the same objects). "random-<seed>": fresh values of the same
    shapes, dtypes, devices, strides and requires_grad: floats N(0,1) scaled to the tensor's own
    std and shifted to its mean when those are finite and std is nonzero (kept non-negative if
    the tensor was), ints uniform in the tensor's observed [min, max], bools fair coin flips.
    "special-<seed>": the random values, with about SPECIAL_FRACTION of the elements of each
    non-parameter tensor replaced by special_values(dtype) (index-like int tensors: the ends of
    their observed range); parameters (is_param True) keep their random values. Deterministic in
    seed; the tensors of "random" and "special" share their random values.
    """
    base = tuple(base)
    if is_param is None:
        is_param = [False] * len(base)
    if len(is_param) != len(base):
        raise ValueError(f"is_param has {len(is_param)} entries for {len(base)} inputs")
    out: list[InputSet] = []
    for kind in kinds:
        if kind == "given":
            out.append(InputSet("given", base))
        elif kind in ("random", "special"):
            counter = [0]
            values = tuple(
                _fresh(x, seed, counter, special=(kind == "special" and not p)) for x, p in zip(base, is_param)
            )
            out.append(InputSet(f"{kind}-{seed}", values))
        else:
            raise ValueError(f"unknown input set kind {kind!r} (given, random, special)")
    return out


# ----------------------------------------------------------------------------------------------


def _map(x: Any, fn) -> Any:
    """fn over the elements of a list/tuple/dict; other values unchanged."""
    if isinstance(x, Mapping):
        return type(x)((k, fn(v)) for k, v in x.items()) if type(x) is not dict else {k: fn(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(fn(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(fn(v) for v in x)
    return x


def _generator(seed: int, n: int, stream: int) -> torch.Generator:
    """A CPU generator for tensor number n of a set: stream 0 for values, 1 for special positions."""
    mixed = (seed * 1_000_003 + n * 9_176 + stream * 7_919_31) % (2**63 - 1)
    return torch.Generator().manual_seed(mixed)


def _fresh(x: Any, seed: int, counter: list[int], *, special: bool) -> Any:
    if not isinstance(x, torch.Tensor):
        return _map(x, lambda v: _fresh(v, seed, counter, special=special))
    n = counter[0]
    counter[0] += 1
    t = x.detach()
    gen = _generator(seed, n, 0)
    if t.numel() == 0:
        values = t.cpu().clone()
    elif t.dtype == torch.bool:
        values = torch.rand(t.shape, generator=gen) < 0.5
    elif t.is_floating_point() or t.is_complex():
        values = _random_float(t, gen)
    else:
        values = _random_int(t, gen)
    if special and t.numel() > 0 and t.dtype != torch.bool:
        values = _with_specials(t, values, _generator(seed, n, 1))
    out = torch.empty_like(t)  # keeps device and (dense) strides
    out.copy_(values.to(t.dtype))
    if x.requires_grad:
        out.requires_grad_(True)
    return out


def _float_stats(t: torch.Tensor) -> tuple[float, float, bool]:
    """mean, std (population) and non-negativity of the finite values of a real tensor."""
    v = t.to(torch.float64)
    v = v[torch.isfinite(v)]
    if v.numel() == 0:
        return math.nan, math.nan, False
    mean = float(v.mean())
    std = float(v.std(correction=0)) if v.numel() > 1 else 0.0
    return mean, std, bool((v >= 0).all())


def _random_float(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    work = torch.float64 if t.dtype in (torch.float64, torch.complex128) else torch.float32
    if t.is_complex():
        parts = torch.view_as_real(t.resolve_conj()).cpu()
        re = _random_real(parts[..., 0], gen, work)
        im = _random_real(parts[..., 1], gen, work)
        return torch.complex(re, im)
    return _random_real(t.cpu(), gen, work)


def _random_real(t: torch.Tensor, gen: torch.Generator, work: torch.dtype) -> torch.Tensor:
    z = torch.randn(t.shape, generator=gen, dtype=work)
    mean, std, nonneg = _float_stats(t)
    if math.isfinite(mean) and math.isfinite(std) and std > 0:
        z = z * std + mean
    if nonneg:
        z = z.abs()
    return z


def _int_profile(t: torch.Tensor) -> tuple[int, int, int | None, float]:
    """(lo, hi, sentinel, sentinel fraction): observed range of the values other than a single
    negative sentinel value (like ignore_index=-100), when there is exactly one such value."""
    v = t.cpu().to(torch.int64) if t.dtype != torch.uint64 else t.cpu()
    lo, hi = int(v.min()), int(v.max())
    if lo < 0 <= hi:
        neg = v[v < 0].unique()
        if neg.numel() == 1:
            s = int(neg[0])
            rest = v[v >= 0]
            return int(rest.min()), int(rest.max()), s, float((v == s).double().mean())
    return lo, hi, None, 0.0


def _randint(lo: int, hi: int, shape: torch.Size, gen: torch.Generator) -> torch.Tensor:
    """Uniform integers in [lo, hi] (inclusive) as int64."""
    if hi < 2**63 - 1:
        return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64)
    return torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64)  # hi itself excluded


def _random_int(t: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    lo, hi, sentinel, frac = _int_profile(t)
    values = _randint(lo, hi, t.shape, gen)
    if sentinel is not None:
        values = torch.where(torch.rand(t.shape, generator=gen) < frac, sentinel, values)
    return values


def _is_index_like(t: torch.Tensor) -> bool:
    lo, hi, _, _ = _int_profile(t)
    return lo >= 0 and hi < INDEX_LIKE_MAX


def _with_specials(t: torch.Tensor, values: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Replace about SPECIAL_FRACTION of the elements (at least one) with special values."""
    n = t.numel()
    mask = torch.rand(t.shape, generator=gen) < SPECIAL_FRACTION
    if not bool(mask.any()):
        pos = int(torch.randint(0, n, (1,), generator=gen))
        mask.view(-1)[pos] = True
    if t.is_floating_point() or t.is_complex():
        pool = special_values(t.dtype).cpu()
        pool = pool.to(values.dtype)
    elif _is_index_like(t):
        lo, hi, sentinel, _ = _int_profile(t)
        pool = torch.tensor(sorted({lo, hi} | ({sentinel} if sentinel is not None else set())), dtype=torch.int64)
    else:
        pool = special_values(t.dtype).cpu()
        pool = pool if t.dtype == torch.uint64 else pool.to(torch.int64)
        values = values.to(pool.dtype)
    pick = torch.randint(0, pool.numel(), t.shape, generator=gen)
    return torch.where(mask, pool[pick], values)

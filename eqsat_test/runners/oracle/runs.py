"""The fp64 runs a judgement weighs beside eager's, by name: antithetic pairs, the Monte Carlo and walk runs, the alternative runs (reference.py makes them, judge.py reads them per leaf)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Antithetic:
    """Two runs whose moves mirror each other: `plus` moved by +r, `minus` by -r (the same draws r)."""

    plus: Any
    minus: Any

    def both(self) -> tuple[Any, Any]:
        return self.plus, self.minus

    def map(self, fn: Callable[[Any], Any]) -> Antithetic:
        return Antithetic(fn(self.plus), fn(self.minus))

    @staticmethod
    def pairs(runs: Sequence[Any]) -> tuple[Antithetic, ...]:
        """Pairs of a sequence of runs (+, -, +, -, ...): as the judge's `fp64_perturbed` list is given.
        Antithetic pairs pass through."""
        runs = list(runs)
        if all(isinstance(r, Antithetic) for r in runs):
            return tuple(runs)
        return tuple(Antithetic(p, m) for p, m in zip(runs[0::2], runs[1::2]))


def flat(pairs: Sequence[Antithetic]) -> list[Any]:
    """The runs of pairs as one list (+, -, +, -, ...)."""
    return [r for p in pairs for r in p.both()]


@dataclass(frozen=True)
class RoundingRuns:
    """The fp64 runs of the program under other roundings than float64's own (rule 1's S (b), (b'), (c)):
    made on the first verdict that fails with the perturbed runs' S (reference.py). A field is None where
    no such run was made (no input holds a subnormal; no cast to a coarser dtype) or where it raised.

    noise: Monte Carlo arithmetic (Parker 1997), SENS_DRAWS antithetic pairs: every floating result of
        an op that may have been rounded in D moved by up to one rounding of D (modes.RoundingNoise).
    walk: one antithetic pair that moves each sum-like reduction by its partial sums' random walk and
        each add by its operands' rounding (RoundingNoise(walk=True)).
    walk_half: the walk pair with every move halved (WALK_HALF): a change that halves with the moves is
        the roundings' own, a step's does not.
    flushed: the fp64 run on inputs with D's subnormals flushed to zero (Triton's default).
    kept_precision: the fp64 run in which each cast to a coarser dtype rounds once and the ops after it
        keep the precision (modes.KeptPrecision; Inductor's default, emulate_precision_casts off)."""

    noise: tuple[Antithetic, ...] = ()
    walk: Antithetic | None = None
    walk_half: Antithetic | None = None
    flushed: Any = None
    kept_precision: Any = None

    def rounded(self) -> list[Any]:
        """The Monte Carlo family (noise, walk, walk_half), one list: where c lies beyond the bound, a run
        of it counts only where it jumps beyond the bound itself (a step its rounding crosses)."""
        return flat(self.noise) + flat([p for p in (self.walk, self.walk_half) if p is not None])

    def alternatives(self) -> list[Any]:
        """The alternative runs (flushed, kept_precision): a c within the bound of one passes anywhere."""
        return [self.flushed, self.kept_precision]

    def all(self) -> list[Any]:
        """Every run (None where none was made): rounded(), then alternatives()."""
        return self.rounded() + self.alternatives()

    def map(self, fn: Callable[[Any], Any]) -> RoundingRuns:
        """The same runs with fn applied to each run that was made (None stays None): one leaf of each."""
        keep = lambda r: None if r is None else fn(r)  # noqa: E731
        pair = lambda p: None if p is None else p.map(keep)  # noqa: E731
        return RoundingRuns(tuple(pair(p) for p in self.noise), pair(self.walk), pair(self.walk_half),
                            keep(self.flushed), keep(self.kept_precision))

    def empty(self) -> bool:
        return all(r is None for r in self.all())


@dataclass(frozen=True)
class LeafRuns:
    """The fp64 runs of one output leaf, by name, as the judge reads them (None: no such run, or one whose
    leaf does not fit; judge._fp64_leaf)."""

    fp64: Any = None  # the program with every floating input in float64
    perturbed: tuple[Antithetic, ...] = ()  # inputs moved by 1 +- SENS_DELTA r: rule 1's S (a)
    rounding: RoundingRuns | None = None  # None: not made (a verdict that passes without them)
    beyond: Any = None  # rule 8's marks: 1 beyond acc(D)'s range, 2 beyond float64's too, else 0


@dataclass(frozen=True)
class EagerOrigin:
    """What eager's own run (origins.EagerOrigins) says of one output leaf: the dtype its value was computed in,
    whether it depends on a random draw, and where it depends on eager's own overflow. A leaf without an
    origin (a Python scalar, a run whose record failed) is judged as before origins were recorded: at the
    program's coarsest dtype (dtype_hint), set aside whole where the eager runs differ, and with no eager
    overflow known."""

    dtype: Any = None  # torch.dtype: the coarsest floating dtype of the ops on its path (None: no floating op)
    random: bool = False  # depends on a random draw or on uninitialized memory (torch.empty)
    # a bool tensor of the leaf's shape: the elements that depend on an intermediate eager itself overflowed
    # (an infinity of finite operands) or converted undefinedly (NaN, inf or out of range to an integer); None:
    # none; or a call that makes it (eager run again, only where a rule asks: overflow_of)
    overflow: Any = None
    # an EdgeOfRange of the leaf's shape: where it depends on partial results of eager's own accumulating ops
    # that reach the edge of the range; None: nowhere; or a call that makes it (the same run again: edge_of)
    edge: Any = None


@dataclass(frozen=True)
class EdgeOfRange:
    """Where the elements of one output leaf depend on partial results of an accumulating op of eager's own (a
    sum, mean, cumsum, product, cumprod, matmul, convolution, variance, normalization) that, in some order of
    that op's terms, reach nx.EDGE_FACTOR of the range of the dtype it accumulates in
    (origins.EagerOrigins): which compiled values another order of those partials can give. Bool masks of the
    leaf's shape; an element of the op's own result admits the infinities of the signs its partials reach
    and NaN where they reach both (inf - inf) or a product holds a zero (0 * inf); one that depends on
    such a result through a further op (`after`) admits any value (a comparison of an infinity, x / inf).

    `under`: the elements of a product's or cumprod's own result (or a cast or copy of it) whose partial products
    fall below the smallest normal number in some order of its factors (edges.product_under): they admit 0, a
    finite value within [low, high] (float64 of the leaf's shape: the exact product within the rounding of
    subnormal partials; NaN where none), and NaN or an infinity where their codes say (0 · inf, an infinite
    factor)."""

    plus: Any  # +inf
    minus: Any  # -inf
    nan: Any  # NaN
    after: Any  # any value
    under: Any = None  # a product's partial products below the smallest normal number in some order
    low: Any = None  # ... the span of finite values another order of its factors gives (NaN: none)
    high: Any = None

    def admits(self, c: Any) -> Any:
        """Where compiled's value `c` (a float64 tensor of the leaf's shape) is one another order can give."""
        return self.after | (torch.isnan(c) & self.nan) | ((c == math.inf) & self.plus) \
            | ((c == -math.inf) & self.minus)

    def admits_under(self, c: Any) -> Any:
        """Where compiled's value `c` is one another order of a product's factors gives at an element whose partial
        products fall below the smallest normal number in some order (`under`): 0, within [low, high] (an infinity
        where that is the product, exactly), or what admits() admits; False elsewhere."""
        if self.under is None:
            return torch.zeros_like(torch.as_tensor(c), dtype=torch.bool)
        out = (c == 0) | self.admits(c)
        if self.low is not None and self.high is not None:
            out = out | ((self.low <= c) & (c <= self.high))
        return self.under & out

    def map(self, fn: Callable[[Any], Any]) -> EdgeOfRange:
        opt = lambda t: None if t is None else fn(t)  # noqa: E731
        return EdgeOfRange(fn(self.plus), fn(self.minus), fn(self.nan), fn(self.after), opt(self.under),
                           opt(self.low), opt(self.high))


def overflow_of(origin: EagerOrigin | None) -> Any:
    """An origin's overflow mask (made on first use where deferred), or None."""
    if origin is None or origin.overflow is None:
        return None
    return origin.overflow() if callable(origin.overflow) else origin.overflow


def edge_of(origin: EagerOrigin | None) -> EdgeOfRange | None:
    """An origin's EdgeOfRange (made on first use where deferred), or None."""
    if origin is None or origin.edge is None:
        return None
    return origin.edge() if callable(origin.edge) else origin.edge

"""Sampling for `rules check`: the plan of dtypes, ranks, scalars and edge cases per rule, shapes, and input values (special values, INT_MIN, large multithreaded shapes)."""
from __future__ import annotations

import inspect
import itertools
import math
import random
from dataclasses import dataclass

import torch
import torch.fx

from eqsat_test.rewrite.ruledsl import Rule, Tensor, dtype_of

_FLOAT_SPECIALS = {
    # ±0, ±inf, NaN, subnormals, huge (incl. the largest finite value)
    torch.float32: (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 1e30, -1e30, 3.0e38),
    torch.float64: (0.0, -0.0, math.inf, -math.inf, math.nan, 5e-320, -5e-320, 1e300, -1e300, 1e30),
    torch.float16: (0.0, -0.0, math.inf, -math.inf, math.nan, 6e-8, -3e-6, 65504.0, -65504.0, 3e4),
    torch.bfloat16: (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 1e30, -3e38, 3e38),
}

@dataclass
class Sample:
    dtypes: dict  # var -> torch.dtype
    ranks: dict  # var -> rank
    scalars: dict  # var -> value
    special: bool  # special values mixed into the inputs (every value mode but "plain")
    # random | odd | ones | wide | noncontig | broadcast | independent | example | scaled | large
    shape_kind: str
    values: str = ""  # plain | special | zeros (±0 only or mostly) | bounds (integer limits)
    threads: int = 1  # intra-op threads the sides run with ("large" samples: LARGE_THREADS)

    def __post_init__(self):
        if not self.values:
            self.values = "special" if self.special else "plain"


def _ranks(spec: Tensor) -> tuple[int, ...]:
    """The ranks a variable is sampled at: its spec's, plus 0 when the rank is unconstrained (a
    rule without a rank condition matches 0-dim tensors in the e-graph too)."""
    if spec.rank is None and spec.shape is None:
        return (0,) + tuple(spec.ranks)
    return spec.ranks


def _cycle(options: list, n: int, rng: random.Random) -> list:
    """`n` picks that run through every option (each pass shuffled) before repeating."""
    out: list = []
    while len(out) < n:
        block = list(options)
        rng.shuffle(block)
        out.extend(block)
    return out[:n]


def plan_samples(rule: Rule, samples: int, rng: random.Random) -> list[Sample]:
    tv = rule.tensor_vars
    specs: dict[str, Tensor] = {v: rule.params[v] for v in tv}
    dts = {v: [dtype_of(d) for d in specs[v].dtypes] for v in tv}
    n_diag = max(len(d) for d in dts.values())
    dtype_opts: list = [("diag", k) for k in range(n_diag)]
    if len(tv) > 1 and any(len(d) > 1 for d in dts.values()):
        dtype_opts += [("mixed", None)] * max(1, n_diag // 2)
    rks = {v: _ranks(specs[v]) for v in tv}
    n_rank = max(len(rks[v]) for v in tv)
    rank_opts: list = [("diag", k) for k in range(n_rank)]
    if len(tv) > 1 and any(len(rks[v]) > 1 for v in tv):
        rank_opts += [("mixed", None)] * max(1, n_rank // 2)
    svars = rule.scalar_vars
    scalar_opts = list(itertools.product(*(rule.params[s].sample_values() for s in svars)))
    if len(scalar_opts) > 64:
        scalar_opts = rng.sample(scalar_opts, 64)
    shape_opts = ["random", "odd", "ones", "noncontig", "random", "wide", "wide"]
    if not rule.same_shape:
        shape_opts += ["broadcast", "broadcast", "independent"]
    if any(getattr(specs[v], "shape", None) is not None for v in tv):
        shape_opts += ["example"] * 4
        if "example-multiples" in rule.tags:  # extents that are multiples of one another
            shape_opts += ["scaled"] * 6
    # enough samples to cover every dtype x {plain, special} and every scalar combination
    n = max(samples, 2 * len(dtype_opts), len(scalar_opts), len(rank_opts))
    dt_seq = _cycle(dtype_opts, n, rng)
    rk_seq = _cycle(rank_opts, n, rng)
    sc_seq = _cycle(scalar_opts, n, rng)
    sh_seq = _cycle(shape_opts, n, rng)
    # value modes: make sure each dtype choice is seen plain and special
    plan = []
    seen_mode: dict = {}
    for i in range(n):
        key = dt_seq[i]
        if key[0] == "diag" and key in seen_mode and len(seen_mode[key]) == 1:
            special = not next(iter(seen_mode[key]))
        else:
            special = rng.random() < 0.5
        seen_mode.setdefault(key, set()).add(special)
        if key[0] == "diag":
            dtypes = {v: dts[v][key[1] % len(dts[v])] for v in tv}
        else:
            dtypes = _mixed_dtypes(tv, dts, rng)
        rk = rk_seq[i]
        if rk[0] == "diag":
            ranks = {v: rks[v][rk[1] % len(rks[v])] for v in tv}
        else:
            ranks = {v: rng.choice(rks[v]) for v in tv}
        plan.append(Sample(dtypes, ranks, dict(zip(svars, sc_seq[i])), special, sh_seq[i]))
    return plan + _edge_plan(rule, dts, rks, scalar_opts, rng)


def _mixed_dtypes(tv: list, dts: dict, rng: random.Random) -> dict:
    """A dtype per variable, drawn independently but not all the same where the specs allow."""
    dtypes = {v: rng.choice(dts[v]) for v in tv}
    if len(set(dtypes.values())) == 1:
        for v in rng.sample(tv, len(tv)):
            other = [d for d in dts[v] if d != dtypes[v]]
            if other:
                dtypes[v] = rng.choice(other)
                break
    return dtypes


# Operand pairs (0-dim dtype, dimensioned dtype) tried first for 0-dim mixed-dtype samples: a
# wider 0-dim float against a narrower tensor, where the result takes the tensor's dtype and the
# order of operands decides whether the scalar is rounded before the operation.
_ZERO_DIM_FIRST = ((torch.float32, torch.float16), (torch.float64, torch.float16),
                   (torch.float32, torch.bfloat16), (torch.float64, torch.float32),
                   (torch.int64, torch.int8), (torch.float32, torch.int64))
ZERO_DIM_MIXED = 6  # 0-dim mixed-dtype samples per rule (when it has 2+ tensor variables)
LARGE_SAMPLES = 2  # multithreaded samples per rule (plain values, then signed-zero ties)
LARGE_THREADS = 2  # intra-op threads for them: fixed, so results do not depend on the machine
LARGE_NUMEL = 40_000  # > at::internal::GRAIN_SIZE (32768): elementwise ops and reductions split
LARGE_MAX_NUMEL = 8 * LARGE_NUMEL  # a large sample whose values would be bigger is skipped (outer products)


def _edge_plan(rule: Rule, dts: dict, rks: dict, scalar_opts: list, rng: random.Random) -> list[Sample]:
    """Samples aimed at known blind spots, run after the main plan: 0-dim tensors (alone and
    against dimensioned operands of another dtype), inputs of signed zeros only (ties), integer
    limits (INT_MIN, INT_MAX), and large shapes run multithreaded."""
    tv = rule.tensor_vars
    svars = rule.scalar_vars
    out: list[Sample] = []

    def sc() -> dict:
        return dict(zip(svars, rng.choice(scalar_opts)))

    def some_rank(v, nonzero=False) -> int:
        pool = [r for r in rks[v] if r] if nonzero else list(rks[v])
        return rng.choice(pool or list(rks[v]))

    zero_vars = [v for v in tv if 0 in rks[v]]
    if zero_vars:  # every 0-dim-capable variable 0-dim
        for special in (False, True):
            out.append(Sample({v: rng.choice(dts[v]) for v in tv},
                               {v: 0 if v in zero_vars else some_rank(v) for v in tv},
                               sc(), special, "random"))
    if zero_vars and len(tv) > 1:  # one 0-dim operand, the others dimensioned, dtypes differ
        cands: list = []
        first: list = []
        for v in zero_vars:
            others = [w for w in tv if w != v]
            for dv in dts[v]:
                for do in set().union(*(dts[w] for w in others)):
                    if do == dv:
                        continue
                    c = (v, dv, do)
                    (first if (dv, do) in _ZERO_DIM_FIRST else cands).append(c)
        rng.shuffle(first)
        rng.shuffle(cands)
        for k, (v, dv, do) in enumerate((first + cands)[:ZERO_DIM_MIXED]):
            dtypes = {w: (dv if w == v else do if do in dts[w] else rng.choice(dts[w])) for w in tv}
            ranks = {w: 0 if w == v else some_rank(w, nonzero=True) for w in tv}
            out.append(Sample(dtypes, ranks, sc(), k % 2 == 1, rng.choice(("random", "odd"))))
    floats = any(d.is_floating_point for v in tv for d in dts[v])

    def float_dtypes() -> dict:
        return {v: rng.choice([d for d in dts[v] if d.is_floating_point] or dts[v]) for v in tv}

    if floats:  # ±0 only, or mostly: ties between zeros (vector bodies and tails may break them apart)
        for kind in ("wide", "wide", "odd"):
            out.append(Sample(float_dtypes(), {v: some_rank(v, nonzero=True) for v in tv}, sc(), True,
                               kind, values="zeros"))
    ints = {v: [d for d in dts[v] if d not in (torch.bool, torch.uint8) and not d.is_floating_point]
            for v in tv}
    if any(ints.values()):  # INT_MIN, INT_MAX and their neighbours, densely
        for _ in range(2):
            dtypes = {v: rng.choice(ints[v] or dts[v]) for v in tv}
            out.append(Sample(dtypes, {v: some_rank(v) for v in tv}, sc(), True,
                               rng.choice(("odd", "random", "wide")), values="bounds"))
    # large and multithreaded: plain values, then zero ties (split between threads differently
    # by the two sides) or, without float dtypes, specials
    for k in range(LARGE_SAMPLES):
        values = "plain" if k % 2 == 0 else "zeros" if floats else "special"
        dtypes = float_dtypes() if values == "zeros" else {v: rng.choice(dts[v]) for v in tv}
        out.append(Sample(dtypes, {v: some_rank(v, nonzero=True) for v in tv}, sc(), values != "plain",
                           "large", values=values, threads=LARGE_THREADS))
    return out


def sample_shapes(rule: Rule, s: Sample, rng: random.Random) -> dict[str, tuple]:
    tv = rule.tensor_vars
    mins = {v: max(1, rule.params[v].min_size) for v in tv}
    kind = s.shape_kind
    maxr = max(s.ranks.values())
    lo = max(mins.values())
    if kind == "ones":
        base = [lo] * maxr
    elif kind == "odd":
        base = [rng.choice([x for x in (3, 5, 7) if x >= lo] or [lo]) for _ in range(maxr)]
    elif kind == "wide" and maxr:  # one long dimension: exercises vectorized kernels and their tails
        pool = [max(lo, d) for d in (1, 2, 3)]
        base = [rng.choice(pool) for _ in range(maxr)]
        base[rng.randrange(maxr)] = rng.choice((16, 17, 67, 133))
    elif kind == "large" and maxr:  # enough elements that kernels split work across threads
        base = [max(lo, d) for d in rng.sample((2, 3, 5), min(3, maxr))] + [lo] * max(0, maxr - 3)
        rng.shuffle(base)
        j = rng.randrange(maxr)
        rest = math.prod(base) // base[j]
        base[j] = max(lo, -(-LARGE_NUMEL // rest)) | 1  # odd: a vector tail too
    else:
        pool = rng.sample(range(max(1, lo), max(1, lo) + 6), 2)
        base = [rng.choice(pool) for _ in range(maxr)]
    out = {}
    per_rank: dict[int, tuple] = {}
    # "example": the example shapes of the rule's variables (e.g. matmul operands that fit), with
    # each distinct extent consistently renamed to a random size, so that they still fit
    examples = {v: getattr(rule.params[v], "shape", None) for v in tv}
    rename: dict[int, int] = {}
    if kind in ("example", "large"):
        for ex in examples.values():
            for d in ex or ():
                if d not in rename:
                    rename[d] = rng.choice((1, 2, 3, 4, 5, 7, 17) if kind == "example" else (2, 3, 5))
        if kind == "large" and rename:  # one extent large (e.g. a matmul's inner dimension)
            big = rng.choice(sorted(rename))
            rename[big] = LARGE_NUMEL // 4 + 1
    k = rng.choice((1, 2, 3)) if kind == "scaled" else 1
    for v in tv:
        r = s.ranks[v]
        if kind == "scaled" and examples[v] is not None:
            # every example extent times one factor: keeps `3 * E` three times `E` and divisors
            shape = tuple(d * k for d in examples[v])
        elif kind in ("example", "large") and examples[v] is not None:
            shape = tuple(rename[d] for d in examples[v])
        elif kind == "independent":
            pool = rng.sample(range(max(1, lo), max(1, lo) + 5), 2)
            shape = tuple(max(mins[v], rng.choice(pool + [1])) for _ in range(r))
        elif kind == "broadcast":
            shape = tuple(1 if (rng.random() < 0.35 and mins[v] <= 1) else d for d in base[maxr - r:])
        elif rule.same_shape:
            if r not in per_rank:
                per_rank[r] = tuple(base[maxr - r:])
            shape = per_rank[r]
        else:  # dims drawn from a small pool so that matmul-like shapes often agree
            shape = (tuple(rng.choice(base) for _ in range(r)) if kind in ("random", "noncontig")
                     else tuple(base[maxr - r:]))
        out[v] = tuple(max(mins[v], d) for d in shape)
    return out


def _values(dtype: torch.dtype, shape: tuple, mode: str, gen: torch.Generator,
            int_min: bool = True) -> torch.Tensor:
    """Sample values; `mode` is plain | special | zeros | bounds (see Sample.values).
    `int_min`: whether INT32_MIN / INT64_MIN may appear (see traps_on_int_min)."""
    special = mode != "plain"
    # scalar choices from a Python generator seeded from `gen`: a torch call per scalar draw
    # made value sampling the checker's largest cost
    r = random.Random(int(torch.randint(0, 1 << 62, (1,), generator=gen))) if special else None
    n = math.prod(shape)
    if dtype == torch.bool:
        if special:
            return torch.full(shape, r.random() < 0.5, dtype=torch.bool)
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        base = torch.randn(shape, generator=gen, dtype=torch.float64) * 2.0
        t = base.to(dtype)
        if mode == "zeros":  # signed zeros, everywhere or mixed with ordinary values: ties
            zeros = torch.where(torch.rand(shape, generator=gen) < 0.5, -0.0, 0.0).to(dtype)
            if r.random() < 0.5:
                return zeros
            return torch.where(torch.rand(shape, generator=gen) < 0.6, zeros, t)
        if special:
            sp = _FLOAT_SPECIALS[dtype]
            # half the time only a few kinds of special per tensor (e.g. just +0.0 and -0.0), so
            # that ties and interactions between two kinds of special are common
            flavor = r.random()
            if flavor < 0.2:  # signed zeros only: ties between +0.0 and -0.0
                sp = sp[:2]
            elif flavor < 0.6:
                sp = tuple(r.sample(sp, r.randint(1, 3)))
            picks = _special_tensor(sp, dtype)[torch.randint(0, len(sp), shape, generator=gen)]
            mask = torch.rand(shape, generator=gen) < r.choice((0.35, 0.8, 1.0))
            mask.view(-1)[r.randrange(max(1, n))] = True
            t = torch.where(mask, picks, t)
        return t
    info = torch.iinfo(dtype)
    lo, hi = (0, 20) if info.min == 0 else (-9, 10)
    t = torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64)
    if special:
        # INT32_MIN / INT64_MIN are left out only for rules that divide with rounding_mode="trunc":
        # `torch.div(min, -1, rounding_mode="trunc")` raises SIGFPE in the CPU kernel (torch 2.13)
        # and would kill the checking process; floor division, `//`, `%` and fmod handle it, and
        # int8/int16 are promoted to int in C++ so they do not trap.
        low = info.min + 1 if (dtype in (torch.int32, torch.int64) and not int_min) else info.min
        sp = tuple(sorted({low, info.min + 1, info.max, info.max - 1, 0, 1, -1 if info.min < 0 else 2}))
        picks = _special_tensor(sp, torch.int64)[torch.randint(0, len(sp), shape, generator=gen)]
        mask = torch.rand(shape, generator=gen) < (0.8 if mode == "bounds" else 0.35)
        mask.view(-1)[r.randrange(max(1, n))] = True
        t = torch.where(mask, picks, t)
    return t.to(dtype)


_SPECIAL_TENSORS: dict = {}


def _special_tensor(values: tuple, dtype: torch.dtype) -> torch.Tensor:
    """`values` as a tensor of `dtype` (cached: the same few tuples come back all the time)."""
    key = (values, dtype)
    t = _SPECIAL_TENSORS.get(key)
    if t is None:
        t = _SPECIAL_TENSORS[key] = torch.tensor(values, dtype=torch.float64 if dtype.is_floating_point
                                                 else torch.int64).to(dtype)
    return t


def make_tensor(dtype, shape, mode, noncontig, gen, int_min=True) -> torch.Tensor:
    if not noncontig or not shape:
        return _values(dtype, shape, mode, gen, int_min)
    if len(shape) == 1:
        return _values(dtype, (shape[0] * 2,), mode, gen, int_min)[::2]
    swapped = shape[:-2] + (shape[-1], shape[-2])
    return _values(dtype, swapped, mode, gen, int_min).transpose(-1, -2)


def traps_on_int_min(rule: Rule, sides) -> bool:
    """Whether `rule` divides with rounding_mode="trunc" (SIGFPE on INT_MIN / -1, see _values);
    read from the traced graph, or from the rule's source when it could not be traced."""
    if sides.graph is None:
        try:
            return "trunc" in inspect.getsource(rule.fn)
        except (OSError, TypeError):
            return True
    for n in sides.graph.nodes:
        if n.op in ("call_function", "call_method") and any(
                isinstance(a, str) and a == "trunc" for a in list(n.args) + list(n.kwargs.values())):
            return True
    return False

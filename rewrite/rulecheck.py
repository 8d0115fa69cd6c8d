"""Rule soundness checker (`eqsat-test rules check`): samples rules in eager PyTorch, fails false numerics claims.

Each rule is run on many inputs and fails when its claimed numerics class (exact / ieee-edge /
approximate) is false; the failure carries a readable counterexample.

How a rule is run: its function is traced once per choice of scalar values with torch.fx proxies
(no Dynamo, no compilation), so that the two sides can be evaluated separately — a sample where
the lhs raises is skipped (the pattern would not have matched a working program), while a sample
where the lhs works and the rhs raises fails the rule. For bidirectional rules the converse holds
too (rhs works, lhs raises: fail). Inputs are sampled over every allowed dtype and rank of every
tensor variable, several shapes (size-1 and odd extents, one long dimension to reach vectorized
kernels and their tails, broadcasting shapes when the rule is not `same_shape`, the variables'
example `shape`s with their extents renamed, non-contiguous inputs), normal-range values and
values mixed with specials (±0, ±inf, NaN, subnormals, huge, integer bounds; sometimes only
signed zeros, to provoke ties). Structural problems (`lint_rule`: rhs variables the lhs does not
bind, bare-variable sides where not allowed) fail a rule before any sampling.

Judging (output dtype and shape must always match exactly):
- exact: bitwise equal — same NaN positions, and elsewhere equal values with equal sign bits.
- ieee-edge: on samples without special inputs, equal except for the sign of zeros (NaN positions
  must agree); on samples with specials, positions where either output is non-finite, or where a
  (broadcast-aligned) input is non-finite, may differ — everything else must be equal.
- approximate: only samples without special inputs are judged: non-finite positions must agree,
  finite values must be close with a dtype-aware tolerance relative to the output's magnitude.
A rule claimed approximate or ieee-edge that was bitwise exact on every sample gets a `note`.
"""
from __future__ import annotations

import itertools
import math
import random
import time
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import torch
import torch.fx
from torch.fx.proxy import GraphAppendingTracer, Proxy

from rewrite.ruledsl import Rule, Tensor, dtype_of

DEFAULT_SAMPLES = 120
SHAPE_RETRIES = 4  # fresh shape draws for one sample when the lhs raises (e.g. matmul mismatch)

# Tolerance per dtype for `approximate` rules (relative to the output's magnitude).
_TOL = {
    torch.float64: 1e-9,
    torch.float32: 1e-5,
    torch.float16: 1e-2,
    torch.bfloat16: 5e-2,
}

_FLOAT_SPECIALS = {
    # ±0, ±inf, NaN, subnormals, huge (incl. the largest finite value)
    torch.float32: (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 1e30, -1e30, 3.0e38),
    torch.float64: (0.0, -0.0, math.inf, -math.inf, math.nan, 5e-320, -5e-320, 1e300, -1e300, 1e30),
    torch.float16: (0.0, -0.0, math.inf, -math.inf, math.nan, 6e-8, -3e-6, 65504.0, -65504.0, 3e4),
    torch.bfloat16: (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 1e30, -3e38, 3e38),
}


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one rule."""

    rule: str
    ok: bool
    claimed: str
    samples: int  # samples evaluated (lhs worked)
    skipped: int  # samples where the lhs raised every time: not meaningful
    counterexample: str | None = None  # why the rule failed, readable, one paragraph
    note: str | None = None  # informational (e.g. "claimed approximate, bitwise exact on all")
    seconds: float = 0.0

    def line(self) -> str:
        status = "ok  " if self.ok else "FAIL"
        s = f"{status} {self.rule} [{self.claimed}] {self.samples} samples, {self.skipped} skipped"
        if self.note:
            s += f" — note: {self.note}"
        if self.counterexample:
            s += f"\n     {self.counterexample}"
        return s


# --------------------------------------------------------------------------------------------
# Tracing a rule into two separately runnable sides


class _Tracer(GraphAppendingTracer):
    """Proxy tracer that lets constants (tensors made eagerly inside the rule) ride in node args."""

    def create_arg(self, a: Any):
        if isinstance(a, torch.Tensor):
            return a
        return super().create_arg(a)


@dataclass
class _Sides:
    graph: torch.fx.Graph | None
    lhs: Any  # arg structure over graph nodes
    rhs: Any
    fallback: Callable | None = None  # when tracing failed: runs the whole function eagerly
    trace_error: str | None = None
    lhs_nodes: list = field(default_factory=list)  # nodes each side needs, in graph order
    rhs_nodes: list = field(default_factory=list)


def _trace(rule: Rule, scalars: dict) -> _Sides:
    graph = torch.fx.Graph()
    tracer = _Tracer(graph)
    proxies = {v: Proxy(graph.placeholder(v), tracer) for v in rule.tensor_vars}
    try:
        out = rule.fn(**proxies, **scalars)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"rule function must return (lhs, rhs), got {type(out).__name__}")
        lhs, rhs = (torch.fx.node.map_aggregate(side, _node_of) for side in out)
    except Exception as e:  # untraceable with proxies: fall back to running both sides at once
        def whole(**kw):
            return rule.fn(**kw, **scalars)

        return _Sides(None, None, None, fallback=whole, trace_error=f"{type(e).__name__}: {e}")
    return _Sides(graph, lhs, rhs, lhs_nodes=_order(graph, lhs), rhs_nodes=_order(graph, rhs))


def _node_of(a: Any) -> Any:
    return a.node if isinstance(a, Proxy) else a


def _needed(arg: Any) -> set:
    seen: set = set()
    stack = []
    torch.fx.node.map_arg(arg, lambda n: stack.append(n))
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        for a in (n.args, n.kwargs):
            torch.fx.node.map_arg(a, lambda m: stack.append(m))
    return seen


def _order(graph: torch.fx.Graph, side: Any) -> list:
    """The nodes `side` depends on, in graph order."""
    needed = _needed(side)
    return [n for n in graph.nodes if n in needed]


def _run_side(nodes: list, side: Any, inputs: dict) -> Any:
    env: dict = {}

    def val(a):
        return torch.fx.node.map_arg(a, lambda n: env[n])

    for n in nodes:
        if n.op == "placeholder":
            env[n] = inputs[n.target]
        elif n.op == "call_function":
            env[n] = n.target(*val(n.args), **val(n.kwargs))
        elif n.op == "call_method":
            self_, *rest = val(n.args)
            env[n] = getattr(self_, n.target)(*rest, **val(n.kwargs))
        else:  # pragma: no cover - proxies only make the three kinds above
            raise RuntimeError(f"unexpected node {n.op}")
    return val(side)


# --------------------------------------------------------------------------------------------
# Sampling


@dataclass
class _Sample:
    dtypes: dict  # var -> torch.dtype
    ranks: dict  # var -> rank
    scalars: dict  # var -> value
    special: bool  # special values mixed into the inputs
    shape_kind: str  # random | odd | ones | wide | noncontig | broadcast | independent | example


def _cycle(options: list, n: int, rng: random.Random) -> list:
    """`n` picks that run through every option (each pass shuffled) before repeating."""
    out: list = []
    while len(out) < n:
        block = list(options)
        rng.shuffle(block)
        out.extend(block)
    return out[:n]


def _plan(rule: Rule, samples: int, rng: random.Random) -> list[_Sample]:
    tv = rule.tensor_vars
    specs: dict[str, Tensor] = {v: rule.params[v] for v in tv}
    dts = {v: [dtype_of(d) for d in specs[v].dtypes] for v in tv}
    n_diag = max(len(d) for d in dts.values())
    dtype_opts: list = [("diag", k) for k in range(n_diag)]
    if len(tv) > 1 and any(len(d) > 1 for d in dts.values()):
        dtype_opts += [("mixed", None)] * max(1, n_diag // 2)
    n_rank = max(len(specs[v].ranks) for v in tv)
    rank_opts: list = [("diag", k) for k in range(n_rank)]
    if len(tv) > 1 and any(len(specs[v].ranks) > 1 for v in tv):
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
            dtypes = {v: rng.choice(dts[v]) for v in tv}
        rk = rk_seq[i]
        if rk[0] == "diag":
            ranks = {v: specs[v].ranks[rk[1] % len(specs[v].ranks)] for v in tv}
        else:
            ranks = {v: rng.choice(specs[v].ranks) for v in tv}
        plan.append(_Sample(dtypes, ranks, dict(zip(svars, sc_seq[i])), special, sh_seq[i]))
    return plan


def _shapes(rule: Rule, s: _Sample, rng: random.Random) -> dict[str, tuple]:
    tv = rule.tensor_vars
    mins = {v: max(1, rule.params[v].min_size) for v in tv}
    kind = s.shape_kind
    maxr = max(s.ranks.values())
    lo = max(mins.values())
    if kind == "ones":
        base = [lo] * maxr
    elif kind == "odd":
        base = [rng.choice([x for x in (3, 5, 7) if x >= lo] or [lo]) for _ in range(maxr)]
    elif kind == "wide":  # one long dimension: exercises vectorized kernels and their tails
        pool = [max(lo, d) for d in (1, 2, 3)]
        base = [rng.choice(pool) for _ in range(maxr)]
        base[rng.randrange(maxr)] = rng.choice((17, 67, 133))
    else:
        pool = rng.sample(range(max(1, lo), max(1, lo) + 6), 2)
        base = [rng.choice(pool) for _ in range(maxr)]
    out = {}
    per_rank: dict[int, tuple] = {}
    # "example": the example shapes of the rule's variables (e.g. matmul operands that fit), with
    # each distinct extent consistently renamed to a random size, so that they still fit
    examples = {v: getattr(rule.params[v], "shape", None) for v in tv}
    rename: dict[int, int] = {}
    if kind == "example":
        for ex in examples.values():
            for d in ex or ():
                if d not in rename:
                    rename[d] = rng.choice((1, 2, 3, 4, 5, 7, 17))
    for v in tv:
        r = s.ranks[v]
        if kind == "example" and examples[v] is not None:
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


def _values(dtype: torch.dtype, shape: tuple, special: bool, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        if special:
            fill = bool(torch.randint(0, 2, (1,), generator=gen).item())
            return torch.full(shape, fill, dtype=torch.bool)
        return torch.rand(shape, generator=gen) < 0.5
    if dtype.is_floating_point:
        base = torch.randn(shape, generator=gen, dtype=torch.float64) * 2.0
        t = base.to(dtype)
        if special:
            sp = torch.tensor(_FLOAT_SPECIALS[dtype], dtype=torch.float64)
            # half the time only a few kinds of special per tensor (e.g. just +0.0 and -0.0), so
            # that ties and interactions between two kinds of special are common
            flavor = float(torch.rand((), generator=gen))
            if flavor < 0.2:  # signed zeros only: ties between +0.0 and -0.0
                sp = sp[:2]
            elif flavor < 0.6:
                k = int(torch.randint(1, 4, (), generator=gen))
                sp = sp[torch.randperm(len(sp), generator=gen)[:k]]
            picks = sp[torch.randint(0, len(sp), shape, generator=gen)].to(dtype)
            density = (0.35, 0.8, 1.0)[int(torch.randint(0, 3, (), generator=gen))]
            mask = torch.rand(shape, generator=gen) < density
            mask.view(-1)[torch.randint(0, max(1, mask.numel()), (1,), generator=gen)] = True
            t = torch.where(mask, picks, t)
        return t
    info = torch.iinfo(dtype)
    lo, hi = (0, 20) if info.min == 0 else (-9, 10)
    t = torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64)
    if special:
        # INT32_MIN / INT64_MIN are left out: `torch.div(min, -1, rounding_mode="trunc")` raises
        # SIGFPE in the CPU kernel (torch 2.13) and would kill the checking process; floor division
        # and remainder handle it, and int8/int16 are promoted to int in C++ so they do not trap.
        low = info.min + 1 if dtype in (torch.int32, torch.int64) else info.min
        sp = torch.tensor(sorted({low, info.min + 1, info.max, info.max - 1, 0, 1,
                                  -1 if info.min < 0 else 2}), dtype=torch.int64)
        picks = sp[torch.randint(0, len(sp), shape, generator=gen)]
        mask = torch.rand(shape, generator=gen) < 0.35
        mask.view(-1)[torch.randint(0, max(1, mask.numel()), (1,), generator=gen)] = True
        t = torch.where(mask, picks, t)
    return t.to(dtype)


def _make(dtype, shape, special, noncontig, gen) -> torch.Tensor:
    if not noncontig or not shape:
        return _values(dtype, shape, special, gen)
    if len(shape) == 1:
        return _values(dtype, (shape[0] * 2,), special, gen)[::2]
    swapped = shape[:-2] + (shape[-1], shape[-2])
    return _values(dtype, swapped, special, gen).transpose(-1, -2)


# --------------------------------------------------------------------------------------------
# Judging


def _short(x: Any, n: int = 6) -> str:
    if isinstance(x, torch.Tensor):
        flat = x.detach().reshape(-1)
        vals = flat[:n].tolist()
        more = f", … {flat.numel() - n} more" if flat.numel() > n else ""
        return f"{str(x.dtype).replace('torch.', '')}{list(x.shape)} {vals}{more}"
    if isinstance(x, (tuple, list)):
        inner = ", ".join(_short(v, n) for v in list(x)[:3])
        return f"({inner}{', …' if len(x) > 3 else ''})"
    return repr(x)


def _leaves(x: Any, path: str = "out") -> list[tuple[str, Any]]:
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        out = []
        for i, v in enumerate(x):
            out += _leaves(v, f"{path}[{i}]")
        return out
    return [(path, x)]


def _struct(x: Any) -> Any:
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        return tuple(_struct(v) for v in x)
    return "tensor" if isinstance(x, torch.Tensor) else type(x).__name__


def _bitwise(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise 'same bits' (NaN == NaN regardless of payload, signed zeros told apart)."""
    if a.dtype.is_floating_point:
        an, bn = torch.isnan(a), torch.isnan(b)
        same = (a == b) & (torch.signbit(a) == torch.signbit(b))
        return (an & bn) | (~an & ~bn & same)
    return a == b


def _equal_or_nan(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise equal, -0 == +0, NaN == NaN."""
    if a.dtype.is_floating_point:
        return (a == b) | (torch.isnan(a) & torch.isnan(b))
    return a == b


def _where_first(mask_bad: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> str:
    idx = mask_bad.nonzero()
    first = tuple(idx[0].tolist()) if idx.numel() else ()
    av = a[first].item() if a.dim() else a.item()
    bv = b[first].item() if b.dim() else b.item()
    return (f"{int(mask_bad.sum())} of {mask_bad.numel()} positions differ, first at {first}: "
            f"lhs {av!r} vs rhs {bv!r}")


def _input_mask(out: torch.Tensor, inputs: dict) -> tuple[torch.Tensor | None, bool]:
    """Positions of `out` aligned with a non-finite input value, and whether some non-finite input
    could not be aligned with the output (different shape: layout changes, reductions)."""
    mask = torch.zeros(out.shape, dtype=torch.bool)
    unaligned = False
    for t in inputs.values():
        if not t.dtype.is_floating_point:
            continue
        bad = ~torch.isfinite(t)
        if not bool(bad.any()):
            continue
        try:
            if torch.broadcast_shapes(t.shape, out.shape) == out.shape:
                mask |= bad.expand(out.shape)
                continue
        except RuntimeError:
            pass
        unaligned = True
    return mask, unaligned


def _tol(out_dtype: torch.dtype, inputs: dict) -> float:
    tol = _TOL.get(out_dtype, 0.0)
    for t in inputs.values():
        tol = max(tol, _TOL.get(t.dtype, 0.0))
    return tol


def _judge_tensor(a, b, claimed, special, inputs) -> str | None:
    if a.dtype != b.dtype:
        return f"output dtype differs: lhs {a.dtype} vs rhs {b.dtype}"
    if a.shape != b.shape:
        return f"output shape differs: lhs {tuple(a.shape)} vs rhs {tuple(b.shape)}"
    if a.is_complex():  # not sampled, but judge sanely if a rule makes complex outputs
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if claimed == "exact":
        bad = ~_bitwise(a, b)
        if bool(bad.any()):
            return "claimed exact but not bitwise equal: " + _where_first(bad, a, b)
        return None
    if claimed == "ieee-edge":
        ok = _equal_or_nan(a, b)
        if not special:
            bad = ~ok
            if bool(bad.any()):
                return ("claimed ieee-edge but differs on inputs without special values: "
                        + _where_first(bad, a, b))
            return None
        excused, unaligned = _input_mask(a, inputs)
        if a.dtype.is_floating_point:
            excused = excused | ~torch.isfinite(a) | ~torch.isfinite(b)
        elif unaligned:
            return None  # non-float output of a non-finite input we cannot align: not judged
        bad = ~ok & ~excused
        if bool(bad.any()):
            return ("claimed ieee-edge but differs where both outputs are finite and the inputs "
                    "there are finite: " + _where_first(bad, a, b))
        return None
    # approximate
    if special:
        return None
    if not a.dtype.is_floating_point:
        bad = a != b
        if bool(bad.any()):
            return "claimed approximate but integer/bool outputs differ: " + _where_first(bad, a, b)
        return None
    af, bf = a.double(), b.double()
    fa, fb = torch.isfinite(af), torch.isfinite(bf)
    nonfinite_bad = (fa != fb) | (~fa & ~fb & ~_equal_or_nan(af, bf))
    if bool(nonfinite_bad.any()):
        return ("claimed approximate but non-finite values differ on inputs without special values: "
                + _where_first(nonfinite_bad, a, b))
    both = fa & fb
    if not bool(both.any()):
        return None
    mag = torch.maximum(af.abs(), bf.abs())
    scale = max(1.0, float(mag[both].max()))
    tol = _tol(a.dtype, inputs)
    err = (af - bf).abs()
    bad = both & (err > tol * (mag + 0.5 * scale))
    if bool(bad.any()):
        worst = float(err[bad].max())
        return (f"claimed approximate but not close (tolerance {tol:g} relative to output magnitude "
                f"{scale:.3g}; worst abs error {worst:.3g}): " + _where_first(bad, a, b))
    return None


def _judge(lhs, rhs, claimed, special, inputs) -> tuple[str | None, bool]:
    """(violation or None, bitwise-identical?)."""
    if _struct(lhs) != _struct(rhs):
        return f"output structure differs: lhs {_struct(lhs)} vs rhs {_struct(rhs)}", False
    bitwise = True
    for (path, a), (_, b) in zip(_leaves(lhs), _leaves(rhs)):
        if isinstance(a, torch.Tensor):
            why = _judge_tensor(a, b, claimed, special, inputs)
            if why:
                return (why if path == "out" else f"{path}: {why}"), False
            if a.dtype == b.dtype and a.shape == b.shape and not bool(_bitwise(a, b).all()):
                bitwise = False
        else:
            same = a == b or (isinstance(a, float) and isinstance(b, float)
                              and math.isnan(a) and math.isnan(b))
            if not same:
                return f"{path}: lhs {a!r} vs rhs {b!r}", False
    return None, bitwise


def _describe(rule: Rule, s: _Sample, inputs: dict, lhs, rhs, why: str) -> str:
    ins = "; ".join(f"{k}={_short(v)}" + ("" if v.is_contiguous() else " (non-contiguous)")
                    for k, v in inputs.items())
    sc = "".join(f"; {k}={v!r}" for k, v in s.scalars.items())
    kind = "with special values" if s.special else "normal-range values"
    return (f"{rule.name} ({rule.numerics}): inputs ({kind}) {ins}{sc}; lhs = {_short(lhs)}; "
            f"rhs = {_short(rhs)}; {why}")


# --------------------------------------------------------------------------------------------
# Driver


class _OneThread:
    """Run eager kernels single-threaded while checking: the tensors are tiny, and with an intra-op
    pool some kernels (e.g. `Tensor.max(dim)` in torch 2.13 on 2 cores) take ~20 ms a call waking
    it, against ~5 us single-threaded."""

    def __enter__(self):
        self.saved = torch.get_num_threads()
        if self.saved != 1:
            torch.set_num_threads(1)

    def __exit__(self, *exc):
        if self.saved != 1:
            torch.set_num_threads(self.saved)


def check_rule(rule: Rule, *, seed: int = 0, samples: int = DEFAULT_SAMPLES) -> CheckResult:
    """Sample `rule` and judge it against its claimed numerics class."""
    with _OneThread():
        return _check_rule(rule, seed=seed, samples=samples)


def _placeholders(arg: Any) -> set[str]:
    return {n.target for n in _needed(arg) if n.op == "placeholder"}


def lint_rule(rule: Rule) -> list[str]:
    """Structural problems that make a rule unusable as a rewrite, whatever its numerics: rhs
    variables missing from the lhs, bidirectional rules whose sides use different variables or
    are a bare variable, a bare-variable lhs, too few sample values for an int Scalar."""
    problems = []
    for v in rule.scalar_vars:
        spec = rule.params[v]
        if spec.kind not in ("int", "float"):
            problems.append(f"Scalar {v!r}: kind must be 'int' or 'float', got {spec.kind!r}")
        if spec.kind == "int" and len(set(spec.sample_values())) < 2:
            problems.append(f"Scalar {v!r}: give at least 2 distinct int values to sample")
    scalars = {v: rule.params[v].sample_values()[0] for v in rule.scalar_vars}
    sides = _trace(rule, scalars)
    if sides.trace_error:
        return problems  # reported by check_rule as a note; nothing structural to read
    lv, rv = _placeholders(sides.lhs), _placeholders(sides.rhs)
    if rv - lv:
        problems.append(f"rhs uses {sorted(rv - lv)} which the lhs does not bind")
    if rule.bidirectional and lv != rv:
        problems.append(f"bidirectional but the sides use different variables "
                        f"(lhs {sorted(lv)}, rhs {sorted(rv)})")
    for name, side in (("lhs", sides.lhs), ("rhs", sides.rhs)):
        bare = isinstance(side, torch.fx.Node) and side.op == "placeholder"
        if bare and (name == "lhs" or rule.bidirectional):
            problems.append(f"the {name} is a bare variable: "
                            + ("it would match every term" if name == "lhs"
                               else "a bidirectional rule would rewrite every term"))
    return problems


@dataclass
class _Outcome:
    kind: str  # ok | skip | rhs-raises | lhs-raises-rhs-works
    sample: _Sample
    inputs: dict | None = None
    lhs: Any = None
    rhs: Any = None
    error: str = ""


def _outcomes(rule: Rule, seed: int, samples: int):
    """Run the sample plan of `rule`; yield one _Outcome per planned sample."""
    salt = zlib.crc32(rule.name.encode()) ^ (seed * 0x9E3779B1)
    rng = random.Random(salt)
    gen = torch.Generator().manual_seed(salt & 0x7FFFFFFF)
    traced: dict = {}
    for s in _plan(rule, samples, rng):
        key = tuple(s.scalars.items())
        if key not in traced:
            traced[key] = _trace(rule, s.scalars)
        sides = traced[key]
        error = ""
        for _ in range(SHAPE_RETRIES):
            shapes = _shapes(rule, s, rng)
            inputs = {v: _make(s.dtypes[v], shapes[v], s.special, s.shape_kind == "noncontig", gen)
                      for v in rule.tensor_vars}
            if sides.fallback is not None:
                try:
                    lhs, rhs = sides.fallback(**inputs)
                except Exception as e:  # cannot tell which side raised: not meaningful
                    error = f"{type(e).__name__}: {e}"
                    continue
                yield _Outcome("ok", s, inputs, lhs, rhs)
                break
            try:
                lhs = _run_side(sides.lhs_nodes, sides.lhs, inputs)
            except Exception as e:
                error = f"{type(e).__name__}: {e}"
                if rule.bidirectional:
                    try:
                        rhs = _run_side(sides.rhs_nodes, sides.rhs, inputs)
                    except Exception:
                        continue
                    yield _Outcome("lhs-raises-rhs-works", s, inputs, None, rhs, error)
                    break
                continue
            try:
                rhs = _run_side(sides.rhs_nodes, sides.rhs, inputs)
            except Exception as e:
                yield _Outcome("rhs-raises", s, inputs, lhs, None, f"{type(e).__name__}: {e}")
                break
            yield _Outcome("ok", s, inputs, lhs, rhs)
            break
        else:
            yield _Outcome("skip", s, error=error or (sides.trace_error or ""))


def find_example(rule: Rule, *, seed: int = 0, samples: int = 64) -> dict | None:
    """Values for every variable of `rule` (tensors and scalars) on which both sides run, or None.
    Normal-range values are preferred; useful to trace a rule with real inputs."""
    with _OneThread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fallback = None
        for o in _outcomes(rule, seed, samples):
            if o.kind == "ok":
                found = {**o.inputs, **o.sample.scalars}
                if not o.sample.special:
                    return found
                fallback = fallback or found
        return fallback


def _check_rule(rule: Rule, *, seed: int, samples: int) -> CheckResult:
    t0 = time.perf_counter()
    evaluated = skipped = 0
    all_bitwise = True
    last_error = ""

    def result(ok, cx=None, note=None):
        return CheckResult(rule=rule.name, ok=ok, claimed=rule.numerics, samples=evaluated,
                           skipped=skipped, counterexample=cx, note=note,
                           seconds=time.perf_counter() - t0)

    problems = lint_rule(rule)
    if problems:
        return result(False, f"{rule.name}: " + "; ".join(problems))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for o in _outcomes(rule, seed, samples):
            if o.kind == "skip":
                skipped += 1
                last_error = o.error or last_error
                continue
            if o.kind == "lhs-raises-rhs-works":
                return result(False, _describe(
                    rule, o.sample, o.inputs, f"<raised {o.error}>", o.rhs,
                    "bidirectional rule: the rhs works but the lhs raises, so rewriting "
                    "rhs -> lhs breaks a working program"))
            if o.kind == "rhs-raises":
                return result(False, _describe(rule, o.sample, o.inputs, o.lhs,
                                               f"<raised {o.error}>", "the lhs works but the rhs raises"))
            evaluated += 1
            why, bitwise = _judge(o.lhs, o.rhs, rule.numerics, o.sample.special, o.inputs)
            if why:
                return result(False, _describe(rule, o.sample, o.inputs, o.lhs, o.rhs, why))
            all_bitwise = all_bitwise and bitwise

    if evaluated == 0:
        return result(False, f"{rule.name}: no valid sample — the lhs raised on every input "
                             f"(last error: {last_error})")
    notes = []
    if rule.numerics != "exact" and all_bitwise:
        notes.append(f"claimed {rule.numerics} but bitwise exact on all {evaluated} samples")
    trace_error = _trace(rule, {v: rule.params[v].sample_values()[0] for v in rule.scalar_vars}).trace_error
    if trace_error:
        notes.append(f"sides not separable by tracing ({trace_error}); lhs/rhs exceptions not "
                     "told apart")
    return result(True, note="; ".join(notes) or None)


def check_rules(rules: Iterable[Rule], *, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                progress: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """`check_rule` over many rules, in order."""
    out = []
    with _OneThread():
        for r in rules:
            res = _check_rule(r, seed=seed, samples=samples)
            if progress is not None:
                progress(res)
            out.append(res)
    return out


def summary(results: list[CheckResult]) -> str:
    """A short report: failures with counterexamples, notes, and a count line."""
    lines = [r.line() for r in results if not r.ok or r.note]
    n_fail = sum(not r.ok for r in results)
    n_note = sum(bool(r.note) for r in results)
    lines.append(f"{len(results)} rules checked: {len(results) - n_fail} ok, {n_fail} failed, "
                 f"{n_note} with notes")
    return "\n".join(lines)


__all__ = ["CheckResult", "check_rule", "check_rules", "find_example", "lint_rule", "summary",
           "DEFAULT_SAMPLES"]

"""Rule soundness checker (`eqsat-test rules check`): samples rules in eager PyTorch, fails false numerics claims.

Each rule is run on many inputs and fails when its claimed numerics class (exact / ieee-edge /
approximate) is false; the failure carries a readable counterexample.

How a rule is run: its function is traced once per choice of scalar values with torch.fx proxies
(no Dynamo, no compilation), so that the two sides can be evaluated separately — a sample where
the lhs raises is skipped (the pattern would not have matched a working program), while a sample
where the lhs works and the rhs raises fails the rule. For bidirectional rules the converse holds
too (rhs works, lhs raises: fail). Inputs are sampled over every allowed dtype and rank of every
tensor variable (0-dim included where the rank is unconstrained, as the e-graph matches 0-dim
tensors then), mixed dtypes, several shapes (size-1 and odd extents, one long dimension to reach
vectorized kernels and their tails, broadcasting shapes when the rule is not `same_shape`, the
variables' example `shape`s with their extents renamed, non-contiguous inputs), normal-range
values and values mixed with specials (±0, ±inf, NaN, subnormals, huge, integer bounds INT_MIN
and INT_MAX included; sometimes only signed zeros, to provoke ties). After that main plan come
samples aimed at known blind spots (`_edge_plan`): 0-dim operands against dimensioned ones of
another dtype (type promotion then rounds the 0-dim one, or not, depending on operand order),
signed zeros only, integer limits densely, and shapes of LARGE_NUMEL elements run with
LARGE_THREADS intra-op threads (kernels split the work, and ties or partial sums fall
differently). Sampling is deterministic: one seed per (rule name, seed). Structural problems
(`lint_rule`: rhs variables the lhs does not bind, bare-variable sides where not allowed) fail a
rule before any sampling.

Judging (output dtype and shape must always match exactly):
- exact: bitwise equal — same NaN positions, and elsewhere equal values with equal sign bits.
- ieee-edge: on samples without special inputs, equal except for the sign of zeros (NaN positions
  must agree); on samples with specials, positions where either output is non-finite, or where a
  (broadcast-aligned) input is non-finite, may differ — everything else must be equal.
- approximate: only samples without special inputs are judged: non-finite positions must agree
  (not their kind: inf and NaN are both overflow), finite values must be close with a dtype-aware
  tolerance (APPROX_TOL, the one place it is kept) relative to the output's magnitude.
A rule claimed approximate or ieee-edge that was bitwise exact on every sample gets a `note`.
"""
from __future__ import annotations

import math
import random
import time
import warnings
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import torch
import torch.fx

from eqsat_test.rewrite.ruledsl import Rule
from eqsat_test.rewrite.rulesample import (  # noqa: F401  (tests read the sizes here)
    LARGE_MAX_NUMEL,
    LARGE_NUMEL,
    LARGE_THREADS,
    Sample,
    make_tensor,
    plan_samples,
    sample_shapes,
    traps_on_int_min,
)
from eqsat_test.rewrite.ruletrace import Sides, TooLarge, needed_nodes, out_leaves, run_side, trace_rule  # noqa: F401

DEFAULT_SAMPLES = 100  # main plan; the edge plan (_edge_plan) adds ~10-20 more per rule
SHAPE_RETRIES = 4  # fresh shape draws for one sample when the lhs raises (e.g. matmul mismatch)

# Tolerance per dtype for `approximate` rules (relative to the output's magnitude): the one place
# the `approximate` class is given a number (`_tol` reads it; nothing else should).
APPROX_TOL = {
    torch.float64: 1e-9,
    torch.float32: 1e-5,
    torch.float16: 1e-2,
    torch.bfloat16: 5e-2,
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



def _struct(x: Any) -> Any:
    if isinstance(x, (tuple, list)) and not isinstance(x, torch.Size):
        return tuple(_struct(v) for v in x)
    return "tensor" if isinstance(x, torch.Tensor) else type(x).__name__


_INT_VIEW = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """`_bitwise(a, b).all()` (same dtype and shape), with one comparison in the common case."""
    if a.dtype.is_floating_point and a.element_size() in _INT_VIEW:
        iv = _INT_VIEW[a.element_size()]
        if torch.equal(a.view(iv), b.view(iv)):
            return True
        return bool(_bitwise(a, b).all())
    if a.is_complex():
        return bool(_bitwise(torch.view_as_real(a), torch.view_as_real(b)).all())
    if a.dtype.is_floating_point:  # (float8: no integer view of its size)
        return bool(_bitwise(a, b).all())
    return torch.equal(a, b)


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
    tol = APPROX_TOL.get(out_dtype, 0.0)
    for t in inputs.values():
        tol = max(tol, APPROX_TOL.get(t.dtype, 0.0))
    return tol


def _judge_tensor(a, b, claimed, special, inputs) -> str | None:
    if a.dtype != b.dtype:
        return f"output dtype differs: lhs {a.dtype} vs rhs {b.dtype}"
    if a.shape != b.shape:
        return f"output shape differs: lhs {tuple(a.shape)} vs rhs {tuple(b.shape)}"
    if _same_bits(a, b):  # bitwise equal satisfies every class
        return None
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
    # finite on one side only fails; both non-finite passes whatever the kind: a reassociated
    # product that overflows gives inf one way and inf * 0 = NaN the other (threads split it)
    nonfinite_bad = fa != fb
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
    for (path, a), (_, b) in zip(out_leaves(lhs), out_leaves(rhs)):
        if isinstance(a, torch.Tensor):
            why = _judge_tensor(a, b, claimed, special, inputs)
            if why:
                return (why if path == "out" else f"{path}: {why}"), False
            if bitwise and not _same_bits(a, b):
                bitwise = False
        else:
            same = a == b or (isinstance(a, float) and isinstance(b, float)
                              and math.isnan(a) and math.isnan(b))
            if not same:
                return f"{path}: lhs {a!r} vs rhs {b!r}", False
    return None, bitwise


def _describe(rule: Rule, s: Sample, inputs: dict, lhs, rhs, why: str) -> str:
    ins = "; ".join(f"{k}={_short(v)}" + ("" if v.is_contiguous() else " (non-contiguous)")
                    for k, v in inputs.items())
    sc = "".join(f"; {k}={v!r}" for k, v in s.scalars.items())
    kind = {"plain": "normal-range values", "special": "with special values",
            "zeros": "signed zeros", "bounds": "integer limits"}.get(s.values, s.values)
    if s.threads != 1:
        kind += f", run with {s.threads} threads"
    return (f"{rule.name} ({rule.numerics}): inputs ({kind}) {ins}{sc}; lhs = {_short(lhs)}; "
            f"rhs = {_short(rhs)}; {why}")


# --------------------------------------------------------------------------------------------
# Driver


class OneThread:
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
    with OneThread():
        return _check_rule(rule, seed=seed, samples=samples)


def _placeholders(arg: Any) -> set[str]:
    return {n.target for n in needed_nodes(arg) if n.op == "placeholder"}


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
    sides = trace_rule(rule, scalars)
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
    sample: Sample
    inputs: dict | None = None
    lhs: Any = None
    rhs: Any = None
    error: str = ""


def sample_outcomes(rule: Rule, seed: int, samples: int):
    """Run the sample plan of `rule`; yield one _Outcome per planned sample."""
    salt = zlib.crc32(rule.name.encode()) ^ (seed * 0x9E3779B1)
    rng = random.Random(salt)
    gen = torch.Generator().manual_seed(salt & 0x7FFFFFFF)
    traced: dict = {}
    for s in plan_samples(rule, samples, rng):
        key = tuple(s.scalars.items())
        if key not in traced:
            sides = trace_rule(rule, s.scalars)
            traced[key] = sides, not traps_on_int_min(rule, sides)
        sides, int_min = traced[key]
        yield run_sample(rule, s, sides, rng, gen, int_min)


class intra_op_threads:
    """Run with `n` intra-op threads (the checker otherwise runs single-threaded, see OneThread)."""

    def __init__(self, n: int):
        self.n = n

    def __enter__(self):
        self.saved = torch.get_num_threads()
        if self.n != self.saved:
            torch.set_num_threads(self.n)

    def __exit__(self, *exc):
        if self.n != self.saved:
            torch.set_num_threads(self.saved)


def run_sample(rule: Rule, s: Sample, sides: Sides, rng, gen, int_min: bool) -> _Outcome:
    """Run one planned sample, with fresh shapes up to SHAPE_RETRIES times."""
    error = ""
    for _ in range(SHAPE_RETRIES):
        shapes = sample_shapes(rule, s, rng)
        if s.shape_kind == "large":  # size every value on "meta" tensors before allocating any
            if sides.fallback is not None:
                return _Outcome("skip", s, error="large sample of an untraced rule")
            meta = {v: torch.empty(shapes[v], dtype=s.dtypes[v], device="meta") for v in rule.tensor_vars}
            try:
                for nodes, side in ((sides.lhs_nodes, sides.lhs), (sides.rhs_nodes, sides.rhs)):
                    run_side(nodes, side, meta, LARGE_MAX_NUMEL)
            except TooLarge as e:
                return _Outcome("skip", s, error=f"large sample too large: {e}")
            except Exception:
                pass  # a side raises, or an op has no meta kernel: found out for real below
        inputs = {v: make_tensor(s.dtypes[v], shapes[v], s.values, s.shape_kind == "noncontig", gen, int_min)
                  for v in rule.tensor_vars}
        if sides.fallback is not None:
            try:
                with intra_op_threads(s.threads):
                    lhs, rhs = sides.fallback(**inputs)
            except Exception as e:  # cannot tell which side raised: not meaningful
                error = f"{type(e).__name__}: {e}"
                continue
            return _Outcome("ok", s, inputs, lhs, rhs)
        try:
            with intra_op_threads(s.threads):
                lhs = run_side(sides.lhs_nodes, sides.lhs, inputs)
        except Exception as e:
            error = f"{type(e).__name__}: {e}"
            if rule.bidirectional:
                try:
                    with intra_op_threads(s.threads):
                        rhs = run_side(sides.rhs_nodes, sides.rhs, inputs)
                except Exception:
                    continue
                return _Outcome("lhs-raises-rhs-works", s, inputs, None, rhs, error)
            continue
        try:
            with intra_op_threads(s.threads):
                rhs = run_side(sides.rhs_nodes, sides.rhs, inputs)
        except Exception as e:
            return _Outcome("rhs-raises", s, inputs, lhs, None, f"{type(e).__name__}: {e}")
        return _Outcome("ok", s, inputs, lhs, rhs)
    return _Outcome("skip", s, error=error or (sides.trace_error or ""))


def find_example(rule: Rule, *, seed: int = 0, samples: int = 64) -> dict | None:
    """Values for every variable of `rule` (tensors and scalars) on which both sides run, or None.
    Normal-range values are preferred; useful to trace a rule with real inputs."""
    with OneThread(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fallback = None
        for o in sample_outcomes(rule, seed, samples):
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
    first_fail = None  # a failure on special values: reported unless one on plain values follows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for o in sample_outcomes(rule, seed, samples):
            if first_fail is not None:  # looking for a plainer counterexample only
                if o.kind == "ok" and o.sample.values == "plain":
                    why, _ = _judge(o.lhs, o.rhs, rule.numerics, False, o.inputs)
                    if why:
                        return result(False, _describe(rule, o.sample, o.inputs, o.lhs, o.rhs, why))
                continue
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
            if why and o.sample.values == "plain":
                return result(False, _describe(rule, o.sample, o.inputs, o.lhs, o.rhs, why))
            if why:
                first_fail = _describe(rule, o.sample, o.inputs, o.lhs, o.rhs, why)
            all_bitwise = all_bitwise and bitwise
    if first_fail is not None:
        return result(False, first_fail)

    if evaluated == 0:
        return result(False, f"{rule.name}: no valid sample — the lhs raised on every input "
                             f"(last error: {last_error})")
    notes = []
    if rule.numerics != "exact" and all_bitwise:
        notes.append(f"claimed {rule.numerics} but bitwise exact on all {evaluated} samples")
    trace_error = trace_rule(rule, {v: rule.params[v].sample_values()[0] for v in rule.scalar_vars}).trace_error
    if trace_error:
        notes.append(f"sides not separable by tracing ({trace_error}); lhs/rhs exceptions not "
                     "told apart")
    return result(True, note="; ".join(notes) or None)


def check_rules(rules: Iterable[Rule], *, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                progress: Callable[[CheckResult], None] | None = None) -> list[CheckResult]:
    """`check_rule` over many rules, in order."""
    out = []
    with OneThread():
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

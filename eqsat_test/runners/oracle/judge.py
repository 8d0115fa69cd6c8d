"""The oracle: judge a program's compiled output against its eager output, per element, with the fp64 run as the judge and eager's error as the yardstick.

The rule (docs/oracle.md says the same, with the reasons). e = eager, c = compiled, f = the
program run eagerly with every floating input in float64; D = the output's dtype (or dtype_hint,
if less precise), acc(D) = float32 for 16/8-bit floats else D, ulp(f) = eps(D)|f| (at least D's
subnormal spacing). Per element of every leaf:

1. e, f finite: c finite and
       |c - f| <= M(n) yard + 4 (ulp(f) + eps(D) typ) + K(n) eps(acc(D)) (|f| + typ) + 16 S
   peers: the leaf's elements (e, f finite, not both 0) with |f| <= 2^16 |f_i|, n of them;
   yard: max(0, |e - f| - ulp(f)/2) here, or its 75th percentile over the peers if larger;
   typ: the peers' median |f|; M(n) = 64 * 32/n in [64, 512]; K(n) = 128 * 32/n in [128, 4096];
   S = |f+ - f| eps(D) / 1e-9, f+- the fp64 run with each floating input scaled by 1 +- 1e-9 r,
   r uniform in [-1, 1] (two draws, the larger), where f+ - f and f- - f mirror each other (0
   where a step lies between them): how far f moves when the inputs move by one rounding of D
   (a sum whose terms cancel); plus 4/16 of the like change of the Monte Carlo runs (each rounded
   intermediate moved by up to one rounding of D; modes.py), or its q75 over the peers, and of the
   walk runs (each sum-like reduction moved by its partial sums' random walk, each add by its
   operands' rounding) at the element itself, where it halves when the moves halve. A c
   within the bound of an alternative run (subnormals flushed; casts' precision kept), or of a
   Monte Carlo run that jumps beyond the bound (a step), is not judged.
2. e non-finite, f finite (eager overflowed): both wrong, not judged; unless f is beyond D's
   range and e is the infinity it rounds to: then c is that infinity (or finite within 1.).
3. f NaN/inf: where e has f's kind c must have it, else c has e's or f's kind. A non-finite c
   where e, f are finite fails, unless it is the infinity f rounds to, or an overflow in
   another order (|e| or |f| within 16x of D's max, or e/f overflow in the element's row).
   No independent fp64 run (none, a float64 leaf's, or one that rounds to D or coarser inside: x.bfloat16()): a
   finite c where e is non-finite is not judged if |c| >= sqrt(D's max) or the inputs hold
   values near D's range (special sets), and on those sets neither is a c of another
   non-finite kind (-inf for NaN) nor a non-finite c where e is finite: either's intermediates
   may have overflowed, nothing says which is right; any other c fails. On the special sets (inputs near
   D's range) a NaN c where e is the infinity f is or rounds to, in a leaf whose finite f
   reach sqrt(D's max), is an overflow in another order (inf - inf): a note.
4. Integers, bools, dtypes, shapes, structure: exact. Indices (index_info): by the values of
   eager's source they select, equal or within 2 eps of the row's largest magnitude.
5. Python floats: 0-d float64. 6. No fp64 run, or a float64 leaf equal to it bitwise: c
   against e, yard = 0, typ = the leaf's median |e|, K = max(1024, 8 K(n)).
7. Two eager runs differ: "nondeterministic", not judged.
8. An element whose value, in the fp64 run of the program under Inductor's decompositions, depends
   on an intermediate beyond acc(D)'s range (fp64_beyond: marks carried through comparisons), or on
   a reduction's partial result beyond it in some order of its terms, is not judged; nor is a NaN c
   there where f is an infinity (0 · inf, inf - inf in that order), nor any c where f is a NaN that
   depends on a value beyond float64's range (the fp64 run's own overflow, then inf · 0), nor any c
   at an element that depends on a conversion of NaN/inf to an integer (undefined in C++).
   Rule 3 under other roundings: a NaN/inf c of another kind than f where an fp64 run under another
   rounding of the intermediates (Monte Carlo, the walk, the alternatives of rule 1) gives that
   NaN/inf too is not judged (a cancellation to exactly 0, in eager's order and float64's, times an
   infinity).
9. (reference.conditioned) Where the program sorts: elements that differ between the tie orders
   of its sorts (index order, each group of ties rotated) take eager's value before judging.

Notes, never failures: elements not judged (2., 3.), signed zeros where e and f agree and c
differs, strides that differ from eager's (torch._dynamo.utils.same does not compare strides;
Inductor keeps eager's by default, keep_output_stride; values do not depend on them).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from eqsat_test.runners.oracle import numerics as nx
from eqsat_test.runners.oracle.exact import LeafResult, first_true, fmt, index_str, judge_exact, judge_index
from eqsat_test.runners.oracle.numerics import leaves, to_fp64, tolerance  # noqa: F401 (re-exported)

__all__ = [
    "Verdict", "judge", "compare_eager", "leaves", "to_fp64", "tolerance",
    "MATCH", "MISMATCH", "NONDETERMINISTIC", "STRUCTURE_MISMATCH",
]

MATCH = "match"
MISMATCH = "mismatch"
NONDETERMINISTIC = "nondeterministic"
STRUCTURE_MISMATCH = "structure-mismatch"


@dataclass(frozen=True)
class Verdict:
    """One judgement of a program's compiled output against its eager output."""

    ok: bool  # True: agree (or set aside as nondeterministic)
    kind: str  # "match" | "mismatch" | "nondeterministic" | "structure-mismatch"
    max_abs_err: float  # max |compiled - eager| over all leaves; inf where NaN/inf positions differ
    max_rel_err: float  # |compiled - eager| / |eager| over finite positions where eager != 0
    leaf: str | None  # path of the first failing leaf, like "[0]['logits'][1]"; None if ok
    detail: str  # one human-readable line: the first failing element with eager, compiled, fp64

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# ----------------------------------------------------------------------------------------------
# structure


def _container_mismatch(r: Any, g: Any) -> str | None:
    if isinstance(r, Mapping):
        if not isinstance(g, Mapping):
            return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
        if set(r.keys()) != set(g.keys()):
            only_r = [k for k in r.keys() if k not in g]
            only_g = [k for k in g.keys() if k not in r]
            return f"keys differ: only eager {only_r}, only compiled {only_g}"
        return None
    if type(r) is not type(g):
        return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
    if isinstance(r, (list, tuple)) and len(r) != len(g):
        return f"length {len(r)} vs {len(g)}"
    return None


def _leaf_mismatch(r: Any, g: Any) -> str | None:
    if isinstance(r, torch.Tensor) or isinstance(g, torch.Tensor):
        if not (isinstance(r, torch.Tensor) and isinstance(g, torch.Tensor)):
            return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
        if tuple(r.shape) != tuple(g.shape):
            return f"shape {tuple(r.shape)} vs {tuple(g.shape)}"
        if r.dtype != g.dtype:
            return f"dtype {r.dtype} vs {g.dtype}"
        return None
    rk, gk = nx.scalar_kind(r), nx.scalar_kind(g)
    if (rk or gk) and rk != gk:
        return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
    if (r is None) != (g is None):
        return f"type {nx.type_name(r)} vs {nx.type_name(g)}"
    return None


def _pair(r: Any, g: Any, path: str, out: list) -> tuple[str, str] | None:
    """Pair up the leaves of r and g into out; return (path, why) at the first structural difference."""
    r, g = nx.normalize_leaf(r), nx.normalize_leaf(g)
    kids = nx.children(r)
    if kids is None:
        if nx.children(g) is not None:
            return path, f"type {nx.type_name(r)} vs {nx.type_name(g)}"
        why = _leaf_mismatch(r, g)
        if why:
            return path, why
        out.append((path, r, g))
        return None
    why = _container_mismatch(r, g)
    if why:
        return path, why
    gkids = [g[k] for k in r.keys()] if isinstance(r, Mapping) else [c for _, c in nx.children(g)]
    for (suffix, rc), gc in zip(kids, gkids):
        bad = _pair(rc, gc, path + suffix, out)
        if bad:
            return bad
    return None


# ----------------------------------------------------------------------------------------------
# floating leaves: the per-element rule


def _judge_float(e: torch.Tensor, c: torch.Tensor, f: torch.Tensor | None, dt: torch.dtype, what: str,
                 shape: tuple[int, ...], extreme: bool = False, fps: list = (),
                 fp64_low: torch.dtype | None = None, mcs: list = (), fb: torch.Tensor | None = None) -> LeafResult:
    """Floating leaves as float64 tensors of one shape (complex as (re, im) pairs); dt: the tolerance dtype;
    fps: the fp64 runs on perturbed inputs (the conditioning term S of rule 1); fp64_low: the coarsest
    dtype the fp64 run rounds its data to (None: float64 throughout); mcs: the fp64 runs under Monte Carlo
    rounding of the intermediates, antithetic pairs (they add to S; a value on the far side of a step
    that one crosses passes), then the alternative runs (flushed subnormals, casts' precision kept: a
    value within the bound of one passes); fb: the marks of the decomposed program's fp64 runs, 1 where
    an element depends on a value beyond the range of acc(D), 2 beyond float64's too, else 0 (rule 8)."""
    if bool((e.view(torch.int64) == c.view(torch.int64)).all()):  # bitwise eager: passes every rule
        return LeafResult(True)
    abs_err, rel_err = nx.max_errors(e, c)
    given = f is not None
    sens = nx.sensitivity(f, list(fps), dt, nx.sens_delta(fp64_low))
    # the Monte Carlo runs (the antithetic pairs at the head of mcs): how far f moves under another
    # rounding of the intermediates
    sens_mc = nx.sensitivity(f, list(mcs[:nx.MC_NOISE]), dt, nx.eps(dt), rounded=True) if mcs else None
    if sens_mc is not None:  # weighed like rounding (ROUND_ULPS), not like S: it is the roundings' own effect
        sens_mc = nx.over_peers(f, sens_mc) * (nx.ROUND_ULPS / nx.SENS_MULT)
        sens = sens_mc if sens is None else sens + sens_mc
    # the reductions' partial sums, rounded in another order (the pair after them): at the element itself
    sens_walk = nx.walk_sensitivity(f, list(mcs[nx.MC_NOISE:nx.MC_WALK]), list(mcs[nx.MC_WALK:nx.MC_RUNS]), dt) \
        if len(mcs) >= nx.MC_RUNS else None
    if sens_walk is not None:
        sens_walk = sens_walk * (nx.ROUND_ULPS / nx.SENS_MULT)
        sens = sens_walk if sens is None else sens + sens_walk
    # a float64 leaf whose fp64 run equals eager has no independent reference (rule 6)
    reference = given and not (dt == torch.float64 and bool(nx.equal_nan(e, f).all()))
    # an fp64 run that rounds to D (or coarser) inside, x.bfloat16(), overflows where eager does: it
    # still tracks the program's roundings (rule 1), but cannot say whose NaN/inf is right
    # (a float64 leaf's fp64 run, the CPU's on a GPU, has float64's range: it overflows where eager may)
    independent = reference and dt != torch.float64 and not (fp64_low is not None and nx.eps(fp64_low) >= nx.eps(dt))
    why_not = "with no independent fp64 run" if not reference else \
        "with an fp64 run no wider than float64" if dt == torch.float64 else \
        f"with an fp64 run that rounds to {str(fp64_low)[6:]} inside"
    if f is None:
        f = e
    fin_e, fin_c, fin_f = torch.isfinite(e), torch.isfinite(c), torch.isfinite(f)
    nan_e, nan_c, nan_f = torch.isnan(e), torch.isnan(c), torch.isnan(f)
    # elements whose exact value depends on an intermediate beyond the range of acc(D): eager's is luck
    marked = (fb >= 1) if fb is not None and given else None  # rule 8 (reference._deferred_beyond's codes)
    beyond = fin_f & marked if marked is not None else None
    f_d = f.to(dt).to(torch.float64)  # f rounded to the dtype: +-inf where it overflows it
    f_over = fin_f & ~torch.isfinite(f_d)
    notes: list[str] = []

    # rule 3: f a true NaN or infinity: c must have f's kind where e has it, else e's or f's
    same_e = (c == e) | (nan_c & nan_e) | (fin_c & fin_e)
    same_f = (c == f) | (nan_c & nan_f)
    e_is_f = (e == f) | (nan_e & nan_f)
    kind_bad = ~fin_f & torch.where(e_is_f, ~same_f, ~(same_f | same_e))
    if not independent:  # no independent fp64 run: where c is so large that its square overflows D, or
        # the inputs hold values near D's range (the special sets), eager's NaN/inf may be an overflow
        # of its own intermediates (x * x, a variance), and on the special sets a NaN of inf - inf as well
        # as an infinity: nothing says which is right
        unknown = kind_bad & ((fin_c & ((c.abs() >= math.sqrt(nx.max_finite(dt))) | extreme)) | (~fin_c & extreme))
        kind_bad &= ~unknown
        if bool(unknown.any()):
            notes.append(f"{what}: compiled finite (or another NaN/inf) where eager is non-finite, {why_not}, at "
                         f"{int(unknown.sum())} elements (beyond sqrt of {str(dt)[6:]}'s range, or special inputs): "
                         f"not judged")
    if marked is not None:  # rule 8 for a NaN f: the NaN depends on a value beyond float64's range (an
        # int8 sweep's cumprod overflows float64 before an exact 0 factor: inf · 0; the exact value is 0),
        # or on a conversion of NaN/inf to an integer, which C++ leaves undefined (a NaN grid coordinate)
        nan_b = kind_bad & nan_f & (fb >= 2)
        kind_bad &= ~nan_b
        if bool(nan_b.any()):
            notes.append(f"{what}: compiled differs from a NaN fp64 at {int(nan_b.sum())} elements whose NaN depends on an "
                         f"intermediate beyond the range of float64 (the fp64 run's own overflow) or on a conversion of NaN/inf "
                         f"to an integer (undefined): not judged")
    # rule 2: e non-finite, f finite: both wrong, not judged; unless f overflows the dtype to e's infinity
    e_over = ~fin_e & fin_f
    e_right = e_over & (e == f_d)
    not_judged = e_over & ~e_right
    kind_bad |= e_right & ~fin_c & (c != e)
    if extreme:  # inputs near D's range: finite terms of both signs overflow to +inf and -inf in another
        # order, and inf - inf is NaN: a NaN where eager is the infinity fp64 is (or rounds to), in a leaf
        # whose finite results reach sqrt(D's max), is not judged (the leaf: a row of window means or of a
        # cumsum after an infinity may hold no finite result at all)
        big = bool((fin_f & (f.abs() >= math.sqrt(nx.max_finite(dt)))).any())  # huge finite terms beside it
        flip = kind_bad & nan_c & torch.isinf(e) & (e_is_f | e_right) & big
        kind_bad &= ~flip
        if bool(flip.any()):
            notes.append(f"{what}: compiled NaN where eager is the infinity fp64 is or rounds to, at {int(flip.sum())} "
                         f"elements, inputs near the range of {str(dt)[6:]}: an overflow in another order, not judged")
    if marked is not None:  # rule 8 for an infinite f: a NaN where some order of a reduction's finite
        # terms under- or overflows before the infinity joins them (0 · inf, inf - inf)
        inf_b = kind_bad & nan_c & torch.isinf(f) & marked
        kind_bad &= ~inf_b
        if bool(inf_b.any()):
            notes.append(f"{what}: compiled NaN where fp64 is infinite at {int(inf_b.sum())} elements whose finite partial "
                         f"results pass the range of {str(nx.acc_dtype(dt))[6:]} in some order (0 · inf, inf - inf): "
                         f"not judged")
    if mcs and bool(kind_bad.any()):  # rule 3 under other roundings: a NaN/inf c that an fp64 run under
        # another rounding of the intermediates (Monte Carlo, the partial sums' walk) or an alternative run
        # gives too: the element's kind depends on the order of its roundings (a cumsum whose +-1e30 terms
        # cancel to exactly 0 in eager's order, and in float64's, times an infinity: NaN; another order
        # leaves the small terms: -inf)
        other = torch.zeros_like(kind_bad)
        for m in mcs:
            if m is not None:
                other |= ~torch.isfinite(m) & ((m == c) | (torch.isnan(m) & nan_c))
        rounded = kind_bad & ~fin_c & other
        kind_bad &= ~rounded
        if bool(rounded.any()):
            notes.append(f"{what}: compiled NaN/inf of another kind than fp64's at {int(rounded.sum())} elements where an "
                         f"fp64 run under another rounding of the intermediates gives it: not judged")
    # rule 1: e and f finite: c finite (or the infinity f rounds to); an overflow in another order
    # (NaN/inf) is accepted near the dtype's range or in a neighbourhood that overflows anyway
    fin_ef = fin_e & fin_f
    c_off = fin_ef & ~fin_c & ~(f_over & (c == f_d))
    if bool(c_off.any()):
        ev = nx.rows(e_over | f_over)
        near = ev.any(-1, keepdim=True).expand(ev.shape).reshape(shape)
        near = near | (torch.maximum(e.abs(), f.abs()) * nx.OVERFLOW_MARGIN >= nx.max_finite(dt))
        if extreme and not independent:  # the mirror of rule 3's: inputs near D's range and no referee,
            near = torch.ones_like(near)  # compiled's intermediates (a square) overflow where eager's do not
        n_ovf = int((c_off & near).sum())
        if n_ovf:
            notes.append(f"{what}: compiled non-finite where eager and fp64 are finite at {n_ovf} elements near the "
                         f"range of {str(dt)[6:]}, beside an overflow"
                         f"{', or on inputs near it ' + why_not if extreme and not independent else ''}: an overflow "
                         f"in another order, not judged")
        if beyond is not None:  # the element depends on a value beyond D's range in exact arithmetic
            in_b = c_off & ~near & beyond
            near = near | beyond
            if bool(in_b.any()):
                notes.append(f"{what}: compiled non-finite where eager and fp64 are finite at {int(in_b.sum())} elements "
                             f"that depend on an intermediate beyond the range of {str(nx.acc_dtype(dt))[6:]} (Inductor's "
                             f"decompositions, in float64): an overflow in another order, not judged")
        kind_bad |= c_off & ~near
    n_not_judged = int(not_judged.sum())
    if n_not_judged:
        notes.append(f"{what}: eager non-finite where fp64 is finite (overflow) at {n_not_judged} elements: "
                     f"both wrong, judged by kind only, which any value passes")

    # rule 1's numeric bound (also for a finite c where eager overflowed to the infinity f rounds to)
    stat = fin_ef & ~((e == 0) & (f == 0))
    f0 = torch.where(fin_f, f, torch.zeros_like(f))
    bnd = nx.bound(torch.where(fin_ef, e, f0), f0, stat, dt, reference)
    limit = bnd.bound if sens is None else bnd.bound + nx.SENS_MULT * sens
    num_bad = fin_c & fin_f & (fin_e | e_right) & ((c - f).abs() > limit)
    if mcs and bool(num_bad.any()):  # a step (a threshold, a comparison) that another rounding crosses too
        stepped = torch.zeros_like(num_bad)
        acc = nx.eps(nx.acc_dtype(dt))
        for i, m in enumerate(mcs):
            if m is not None:  # c judged against m as against f: the bound's relative parts at |m|;
                # a Monte Carlo run only where it jumps (else S counts it), an alternative run anywhere
                more = (m.abs() - f.abs()).clamp(min=0)  # the relative parts for m's excess over |f|
                near_m = limit + (nx.ROUND_ULPS * nx.eps(dt) + bnd.k.reshape(shape) * acc) * more
                jumps = ((m - f).abs() > limit) if i < nx.MC_RUNS else torch.ones_like(num_bad)
                stepped |= torch.isfinite(m) & jumps & ((c - m).abs() <= near_m)
        if bool((num_bad & stepped).any()):
            notes.append(f"{what}: compiled beyond the bound at {int((num_bad & stepped).sum())} elements where an "
                         f"fp64 run under another rounding of the intermediates (a step it crosses), with subnormals "
                         f"flushed or with a cast's precision kept gives it: not judged")
            num_bad &= ~stepped
    if beyond is not None and bool((num_bad & beyond).any()):
        notes.append(f"{what}: compiled beyond the bound at {int((num_bad & beyond).sum())} elements that depend on an "
                     f"intermediate beyond the range of {str(nx.acc_dtype(dt))[6:]}: not judged")
        num_bad &= ~beyond
    bad = kind_bad | num_bad
    if not bool(bad.any()):
        zs = (c == 0) & (e == 0) & (f == 0) & (torch.signbit(e) == torch.signbit(f)) & (torch.signbit(c) != torch.signbit(e))
        if bool(zs.any()):
            p = first_true(zs)
            notes.append(f"{what}: signed zero differs at {int(zs.sum())} elements, first at {index_str(p, shape)} "
                         f"(eager and fp64 {fmt(float(e.reshape(-1)[p]))}, compiled {fmt(float(c.reshape(-1)[p]))})")
        return LeafResult(True, abs_err, rel_err, notes=notes)

    p = first_true(bad)
    ev_, cv, fv = (float(t.reshape(-1)[p]) for t in (e, c, f))
    counts = [f"NaN/Inf positions differ at {int(kind_bad.sum())}"] if bool(kind_bad.any()) else []
    if bool(num_bad.any()):
        counts.append(f"{int(num_bad.sum())} exceed the fp64 bound")
    head = (f"{what}: {' and '.join(counts)} of {e.numel()} elements, first at {index_str(p, shape)}: "
            f"eager {fmt(ev_)}, compiled {fmt(cv)}, fp64 {fmt(fv) if given else '(none)'}")
    if bool(kind_bad.reshape(-1)[p]):
        if math.isfinite(ev_) and math.isfinite(fv):
            why = "compiled is non-finite where eager and fp64 are finite" if given else \
                "compiled is non-finite where eager is finite; no fp64 reference"
        else:
            why = "compiled disagrees in kind with both eager and fp64"
        return LeafResult(False, math.inf, math.inf, f"{head} ({why})")
    b, acc, d = float(limit.reshape(-1)[p]), str(nx.acc_dtype(dt))[6:], str(dt)[6:]
    sp = 0.0 if sens is None else float(sens.reshape(-1)[p])
    cond = f" + {nx.SENS_MULT:g} x S {fmt(sp)} (fp64's change when the inputs{' and intermediates' if mcs else ''} " \
           f"move by one rounding of {d})" if sp else ""
    mk, n = f"{fmt(float(bnd.k[p]))} eps({acc})", int(bnd.peers[p])
    if reference:
        rule = (f"|compiled - fp64| = {fmt(abs(cv - fv))} > {fmt(b)} = {fmt(float(bnd.mult[p]))} x eager's error "
                f"{fmt(float(bnd.yard[p]))} (beyond rounding; here, or the q{nx.YARD_QUANTILE * 100:g} of {n} peers) + {nx.ROUND_ULPS:g} (ulp({d}, fp64) + eps({d}) typ) + "
                f"{mk} (|fp64| + typ){cond}, typ = the peers' median |fp64| {fmt(float(bnd.typ[p]))}")
    else:
        rule = (f"no independent fp64 reference: |compiled - eager| = {fmt(abs(cv - ev_))} > {fmt(b)} = {nx.ROUND_ULPS:g} "
                f"(ulp({d}, eager) + eps({d}) typ) + {mk} (|eager| + typ){cond}, typ = the peers' median |eager| "
                f"{fmt(float(bnd.typ[p]))}")
    return LeafResult(False, abs_err, rel_err, f"{head} ({rule})")


def _stride_note(r: torch.Tensor, g: torch.Tensor, what: str) -> str | None:
    if r.layout != torch.strided or g.layout != torch.strided or r.numel() <= 1:
        return None
    rs = [s for s, n in zip(r.stride(), r.shape) if n > 1]
    gs = [s for s, n in zip(g.stride(), g.shape) if n > 1]
    if rs != gs:
        return f"{what}: strides differ (eager {tuple(r.stride())}, compiled {tuple(g.stride())}; values agree)"
    return None


def _fp64_leaf(f: Any, r: torch.Tensor) -> torch.Tensor | None:
    """The fp64 run's leaf, when it is a floating tensor of r's shape at least as precise as r."""
    if isinstance(f, torch.Tensor) and tuple(f.shape) == tuple(r.shape) and (f.is_floating_point() or f.is_complex()) \
            and f.is_complex() == r.is_complex():
        fd = nx.dense(f)
        if nx.eps(fd.dtype) <= nx.eps(r.dtype):
            return nx.as_real64(fd.to(r.device))
    if nx.scalar_kind(f) in ("float", "int") and r.numel() == 1 and not r.is_complex():
        return torch.tensor(float(f), dtype=torch.float64).reshape(r.shape)
    return None


def _fp64_beyond_mask(fb: Any, r: torch.Tensor) -> torch.Tensor | None:
    """Rule 8 for an integer or bool leaf: where the BeyondRange runs' marks (a float64 leaf of r's shape) are set."""
    if isinstance(fb, torch.Tensor) and fb.is_floating_point() and tuple(fb.shape) == tuple(r.shape):
        return (fb >= 1).to(r.device)
    return None


def _judge_leaf(path: str, r: Any, g: Any, f: Any, hint: torch.dtype | None, index: tuple | None,
                extreme: bool = False, fps: list = (), fp64_low: torch.dtype | None = None,
                mcs: list = (), fb: Any = None) -> LeafResult:
    what = path or "output"
    kind = nx.scalar_kind(r)
    if kind in ("bool", "int"):
        if r == g:
            return LeafResult(True)
        d = float(abs(int(r) - int(g)))
        return LeafResult(False, d, d / abs(r) if r else 0.0, f"{what}: {kind} {r} vs {g} (exact)")
    if kind in ("float", "complex"):  # Python floats are doubles: judged as 0-d float64, fp64 as reference
        dt = nx.tol_dtype(torch.float64, hint)
        to_t = lambda x: nx.as_real64(torch.tensor(x, dtype=torch.complex128 if isinstance(x, complex)  # noqa: E731
                                                     else torch.float64))
        rt, gt = to_t(r), to_t(g)
        ft = None
        if isinstance(f, torch.Tensor) and f.numel() == 1 and (f.is_floating_point() or f.is_complex()):
            ft = nx.as_real64(nx.dense(f).cpu().reshape(()).to(torch.complex128 if kind == "complex" else torch.float64))
        elif nx.scalar_kind(f) in ("float", "complex", "int"):
            ft = to_t(complex(f) if kind == "complex" else float(f))
        if ft is not None and ft.shape != rt.shape:
            ft = None
        return _judge_float(rt, gt, ft, dt, f"{what} (python {kind})", tuple(rt.shape), extreme, fp64_low=fp64_low)
    if isinstance(r, torch.Tensor):
        stride = _stride_note(r, g, what)
        r, g = nx.dense(r), nx.dense(g).to(r.device)
        desc = f"{what} {str(r.dtype).removeprefix('torch.')}{list(r.shape)}"
        if index is not None and not (r.is_floating_point() or r.is_complex() or r.dtype == torch.bool):
            source, dim = index
            res = judge_index(r, g, source, dim, hint, desc + " (indices)")
        elif r.is_floating_point() or r.is_complex():
            e64 = nx.as_real64(r)
            res = _judge_float(e64, nx.as_real64(g), _fp64_leaf(f, r), nx.tol_dtype(r.dtype, hint), desc,
                               tuple(e64.shape), extreme, [_fp64_leaf(fp, r) for fp in fps], fp64_low,
                               [_fp64_leaf(m, r) for m in mcs], _fp64_leaf(fb, r))
        else:
            res = judge_exact(r, g, desc, [f, *mcs], _fp64_beyond_mask(fb, r))
        if stride and res.ok:
            res.notes.append(stride)
        return res
    if r is None:
        return LeafResult(True)
    try:
        same = bool(r == g)
    except Exception:
        same = repr(r) == repr(g)
    if same:
        return LeafResult(True)
    return LeafResult(False, 0.0, 0.0, f"{what}: {nx.type_name(r)} {r!r} vs {g!r}")


def _bitwise_difference(ref: Any, ref2: Any, index_info: Mapping[str, tuple] | None
                        ) -> tuple[str, str, float, float] | None:
    """First difference between two eager runs: (path, why, max abs err, max rel err), or None."""
    pairs: list = []
    bad = _pair(ref, ref2, "", pairs)
    if bad:
        return bad[0], f"structure varied between two eager runs: {bad[1]}", 0.0, 0.0
    first = None
    max_abs = max_rel = 0.0
    for path, a, b in pairs:
        what = path or "output"
        if isinstance(a, torch.Tensor):
            a, b = nx.dense(a), nx.dense(b).to(a.device)
            if index_info and path in index_info and not (a.is_floating_point() or a.is_complex()):
                res = judge_index(a, b, *index_info[path], torch.float64, what + " (indices)")
                if not res.ok and first is None:
                    first = (path, res.detail)
                continue
            eq = nx.equal_nan(a, b)
            if bool(eq.all()):  # (the usual case: no error to measure, a pass over a large leaf saved)
                continue
            if a.is_floating_point() or a.is_complex():
                e_abs, e_rel = nx.max_errors(nx.as_real64(a), nx.as_real64(b))
            elif a.dtype != torch.bool:
                e_abs, e_rel = nx.max_errors(a.to(torch.float64), b.to(torch.float64))
            else:
                e_abs = e_rel = 1.0
            max_abs, max_rel = max(max_abs, e_abs), max(max_rel, e_rel)
            if first is None:
                p = first_true(~eq)
                first = (path, f"{what}: eager run twice differs at {int((~eq).sum())} of {a.numel()} elements, "
                               f"first at {index_str(p, tuple(a.shape))} ({a.reshape(-1)[p].item()} vs "
                               f"{b.reshape(-1)[p].item()})")
        else:
            same = (a == b) or (isinstance(a, float) and math.isnan(a) and isinstance(b, float) and math.isnan(b))
            if not same and first is None:
                first = (path, f"{what}: eager run twice differs ({a!r} vs {b!r})")
    if first is None:
        return None
    return first[0], first[1], max_abs, max_rel


# ----------------------------------------------------------------------------------------------
# public


def judge(ref: Any, got: Any, fp64: Any = None, *, ref2: Any = None, index_info: Mapping[str, tuple] | None = None,
          dtype_hint: Any = None, extreme_inputs: bool = False, fp64_perturbed: Any = None,
          fp64_low: Any = None, fp64_rounded: Any = None, fp64_beyond: Any = None) -> Verdict:
    """Judge a program's compiled output `got` against its eager output `ref` (the rule: module docstring).

    fp64: the same program's eager output with floating inputs/parameters in float64 (None: no
    independent reference; compiled is compared with eager, rule 6). ref2: a second eager
    output; if it differs from ref (NaN == NaN) the verdict is "nondeterministic", ok=True, not
    judged. index_info: leaf path -> (eager source tensor, dim) for index outputs, judged by the
    values they select. dtype_hint: the program's lowest floating precision (e.g. torch.float16
    for a half model whose output is upcast); a leaf gets the wider eps and narrower range of
    its own dtype and the hint. extreme_inputs: the inputs hold values near the dtype's range
    (the special sets): without an independent fp64 run, a finite compiled value where eager is
    NaN/inf is then not judged (eager's intermediates may have overflowed). fp64_perturbed: a
    list of fp64 runs on inputs scaled by (1 +- SENS_DELTA): rule 1's conditioning term S.
    fp64_low: the coarsest dtype the fp64 run rounds its floating data to (an explicit cast in the
    program); where it is as coarse as a leaf's dtype, the fp64 run is no independent judge of
    NaN/inf (rule 3's clause for no independent run). fp64_rounded: fp64 runs under Monte Carlo
    rounding of the intermediates to the program's dtype (numerics.py): a compiled integer they
    reach, or a compiled value on the far side of a step they cross, is decided by rounding.
    fp64_beyond: the marks of the program's fp64 runs under Inductor's decompositions, a float64 leaf
    per output leaf: 1 where an element depends on a value beyond the range of acc(D) (D's arithmetic
    cannot hold it, and eager's finite value is luck: not judged, nor a NaN c where f is infinite), 2
    where beyond float64's too or on a conversion of NaN/inf to an integer (a NaN f there is no
    judge), else 0 (rule 8).
    """
    hint, low64 = nx.parse_dtype(dtype_hint), nx.parse_dtype(fp64_low)
    index_info = dict(index_info or {})
    if ref2 is not None:
        diff = _bitwise_difference(ref, ref2, index_info)
        if diff is not None:
            path, why, e_abs, e_rel = diff
            return Verdict(True, NONDETERMINISTIC, e_abs, e_rel, path, f"nondeterministic, not judged: {why}")
    pairs: list = []
    bad = _pair(ref, got, "", pairs)
    if bad:
        path, why = bad
        return Verdict(False, STRUCTURE_MISMATCH, 0.0, 0.0, path, f"{path or 'output'}: structure differs: {why}")

    fp64_by_path = dict(leaves(fp64)) if fp64 is not None else {}
    perturbed = [dict(leaves(t)) for t in (fp64_perturbed or [])] if fp64 is not None else []
    rounded = [dict(leaves(t)) for t in (fp64_rounded or [])] if fp64 is not None else []
    beyond_by_path = dict(leaves(fp64_beyond)) if fp64_beyond is not None else {}
    max_abs = max_rel = 0.0
    failures: list[tuple[str, str]] = []
    notes: list[str] = []
    for path, r, g in pairs:
        res = _judge_leaf(path, r, g, fp64_by_path.get(path), hint, index_info.get(path), extreme_inputs,
                          [p.get(path) for p in perturbed], low64, [m.get(path) for m in rounded],
                          beyond_by_path.get(path))
        max_abs, max_rel = max(max_abs, res.abs_err), max(max_rel, res.rel_err)
        if not res.ok:
            failures.append((path, res.detail))
        notes.extend(res.notes)
    if failures:
        path, detail = failures[0]
        more = f" (+{len(failures) - 1} more failing leaves of {len(pairs)})" if len(failures) > 1 else ""
        return Verdict(False, MISMATCH, max_abs, max_rel, path, detail + more)
    detail = f"match: {len(pairs)} {'leaf agrees' if len(pairs) == 1 else 'leaves agree'}, max abs err {fmt(max_abs)}"
    if notes:
        detail += "; note: " + notes[0] + (f" (+{len(notes) - 1} more notes)" if len(notes) > 1 else "")
    return Verdict(True, MATCH, max_abs, max_rel, None, detail)


def compare_eager(seed_ref: Any, variant_ref: Any, seed_fp64: Any = None, *,
                  index_info: Mapping[str, tuple] | None = None, dtype_hint: Any = None) -> Verdict:
    """A rewritten program's eager output against the original's (unsound-rewrite check); the rules of judge."""
    return judge(seed_ref, variant_ref, seed_fp64, index_info=index_info, dtype_hint=dtype_hint)

"""Each oracle rule of runners/oracle/rules.py on its own: one element it convicts or clears, one it must not; the table's own checks (behaviour, tests, docs) and the verdict's rule counts."""
from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import torch

from eqsat_test.runners.oracle import engine, rules
from eqsat_test.runners.oracle.inputs import InputSet
from eqsat_test.runners.oracle.judge import MISMATCH, NONDETERMINISTIC, STRUCTURE_MISMATCH, judge
from eqsat_test.runners.oracle.reference import eager_reference, judge_against
from eqsat_test.runners.oracle.runs import Antithetic, EagerOrigin, EdgeOfRange, RoundingRuns, overflow_of
from eqsat_test.runners.oracle.verdict import LeafRules, RuleCount, Verdict, rule_totals

REPO = Path(__file__).resolve().parents[4]
INF, NAN = math.inf, math.nan


def counts(v: Verdict) -> dict[str, int]:
    return v.totals()


def ones(n: int = 64, dtype=torch.float32) -> torch.Tensor:
    return torch.ones(n, dtype=dtype)


def own_overflow(*flags: bool) -> dict[str, EagerOrigin]:
    """The eager run's record of a bare output: eager itself overflowed on the path of the elements flagged."""
    return {"": EagerOrigin(overflow=torch.tensor(flags))}


def at_edge(n: int, plus=(), minus=(), nan=(), after=()) -> dict[str, EagerOrigin]:
    """The eager run's record of a bare output of n elements: what another order of eager's own partial results
    at the edge of the range can give at the elements listed (an infinity of a sign, NaN, any value after)."""
    mask = lambda ks: torch.tensor([k in ks for k in range(n)])  # noqa: E731
    return {"": EagerOrigin(edge=EdgeOfRange(mask(plus), mask(minus), mask(nan), mask(after)))}


# ---------------------------------------------------------------------------------------------- the table


def test_every_rule_has_a_behaviour_a_test_and_a_row_in_the_docs():
    import eqsat_test.runners.oracle.grad  # noqa: F401 - registers training.random-stream
    import eqsat_test.runners.oracle.lenient  # noqa: F401 - registers lenient.wider-run
    import eqsat_test.runners.oracle.reference  # noqa: F401 - registers ties.sort-order
    assert set(engine.BEHAVIOUR) == set(rules.BY_ID)
    docs = (REPO / "docs" / "oracle.md").read_text()
    assert rules.markdown() in docs  # the docs' table is the table's own (python -m eqsat_test.runners.oracle.rules)
    here = globals()
    real_bugs = (REPO / rules.REAL_BUGS).read_text()
    for r in rules.RULES:
        path, name = r.test.split("::")
        assert path == rules.TESTS and callable(here.get(name)), r.test
        assert f"`{r.id}`" in docs and name in docs, r.id
        assert r.effect in (rules.CONVICTS, rules.CLEARS, rules.NOTES)
        # every clearing rule has a real bug of its shape it must not clear, a test of its own
        assert bool(r.must_not_clear) == (r.effect == rules.CLEARS), r.id
        if r.must_not_clear:
            path, name = r.must_not_clear.split("::")
            assert path == rules.REAL_BUGS and f"\ndef {name}(" in real_bugs and name in docs, r.must_not_clear
        for c in r.charges:  # a clearing rule clears what a convicting rule of its scope, before it, charged
            assert rules.BY_ID[c].effect == rules.CONVICTS and rules.BY_ID[c].scope == r.scope
            assert rules.RULES.index(rules.BY_ID[c]) < rules.RULES.index(r)


def test_a_verdict_round_trips_through_json_with_its_rule_counts():
    v = Verdict(False, MISMATCH, 1.5, 0.25, "[0]", "x", (LeafRules("[0]", (RuleCount("finite.bound", 3),
                                                                          RuleCount("bound.walk", 1))),))
    d = json.loads(json.dumps(v.to_dict()))
    assert d["rules"] == [{"leaf": "[0]", "counts": {"finite.bound": 3, "bound.walk": 1}}]
    assert Verdict.from_dict(d) == v
    assert RuleCount.from_dict(RuleCount("a", 2).to_dict()) == RuleCount("a", 2)
    assert rule_totals([d, d]) == {"bound.walk": 2, "finite.bound": 6}
    assert v.with_counts("[1]", [RuleCount("ties.sort-order", 2)]).totals()["ties.sort-order"] == 2


def test_a_verdict_lists_the_rules_per_leaf():
    e = (torch.tensor([1.0, -0.0]), torch.tensor([1, 2]))
    v = judge(e, (torch.tensor([1.0, 0.0]), torch.tensor([1, 3])), tuple(t.double() for t in e))
    assert not v.ok and v.leaf == "[1]"
    assert v.rules == (LeafRules("[0]", (RuleCount("note.signed-zero", 1),)),
                       LeafRules("[1]", (RuleCount("exact.differs", 1),)))


def test_the_named_runs_keep_their_order():
    runs = RoundingRuns(noise=(Antithetic(1, 2), Antithetic(3, 4)), walk=Antithetic(5, 6),
                        walk_half=Antithetic(7, 8), flushed=None, kept_precision=9)
    assert runs.rounded() == [1, 2, 3, 4, 5, 6, 7, 8] and runs.alternatives() == [None, 9]
    assert runs.map(lambda x: x * 10).all() == [10, 20, 30, 40, 50, 60, 70, 80, None, 90]
    assert Antithetic.pairs([1, 2, 3, 4]) == (Antithetic(1, 2), Antithetic(3, 4))
    assert RoundingRuns().empty() and not runs.empty()


# ---------------------------------------------------------------------------------------------- output


def test_output_nondeterministic():
    ref = torch.tensor([1.0, 2.0, 3.0])
    ref2 = ref.clone()
    ref2[1] = 2.5
    v = judge(ref, ref * 7, ref.double(), ref2=ref2)
    assert (v.ok, v.kind, counts(v)) == (True, NONDETERMINISTIC, {"output.nondeterministic": 1})
    v = judge(ref, ref * 7, ref.double(), ref2=ref.clone())  # two equal eager runs: judged
    assert not v.ok and "output.nondeterministic" not in counts(v)


def test_output_structure():
    v = judge((torch.ones(3),), (torch.ones(4),))
    assert (v.kind, counts(v)) == (STRUCTURE_MISMATCH, {"output.structure": 1})
    assert judge((torch.ones(3),), (torch.ones(3),)).rules == ()


# ---------------------------------------------------------------------------------------------- leaves that vary


def varying() -> tuple[torch.Tensor, torch.Tensor]:
    """Two eager runs of one leaf that differ at element 0 without a random draw (a nondeterministic kernel)."""
    e = torch.tensor([1.0, 2.0, 3.0, 4.0])
    e2 = e.clone()
    e2[0] = 1.5
    return e, e2


def test_varies_non_finite():
    e, e2 = varying()
    c = e.clone()
    c[2] = NAN
    v = judge(e, c, e.double(), ref2=e2, origins={"": EagerOrigin()})
    assert not v.ok and "(2,)" in v.detail and "both eager runs" in v.detail
    assert counts(v) == {"varies.non-finite": 1}
    c[2] = 3.5  # a finite value off: not judged, the eager runs differ
    v = judge(e, c, e.double(), ref2=e2, origins={"": EagerOrigin()})
    assert (v.ok, v.kind) == (True, NONDETERMINISTIC) and counts(v) == {"varies.set-aside": 1}


def test_varies_own_overflow():
    e, e2 = varying()
    c = torch.tensor([1.0, INF, NAN, 4.0])
    v = judge(e, c, e.double(), ref2=e2, origins=own_overflow(False, True, False, False))
    assert not v.ok and "(2,)" in v.detail  # element 1 depends on eager's own overflow; element 2 does not
    assert counts(v) == {"varies.non-finite": 2, "varies.own-overflow": 1}
    edge = at_edge(4, nan=(2,))[""]  # element 2: eager's own partial results reach the edge, NaN in some order
    v = judge(e, c, e.double(), ref2=e2, origins={"": EagerOrigin(overflow=torch.tensor([False, True, False, False]),
                                                                  edge=edge.edge)})  # element 2: eager's partials reach the edge, NaN in some order
    assert v.ok and counts(v) == {"varies.non-finite": 2, "varies.own-overflow": 2, "varies.set-aside": 2}


def test_varies_set_aside():
    e, _ = varying()
    drop = torch.tensor([0.0, 2.0, 0.0, 2.0])
    out, out2 = (drop, e), (torch.tensor([2.0, 0.0, 0.0, 2.0]), e.clone())
    origins = {"[0]": EagerOrigin(random=True), "[1]": EagerOrigin()}
    other = (torch.tensor([2.0, 2.0, 0.0, 0.0]), e.clone())  # other draws
    v = judge(out, other, tuple(t.double() for t in out), ref2=out2, origins=origins)
    assert (v.ok, v.kind) == (True, NONDETERMINISTIC)
    assert v.rules == (LeafRules("[0]", (RuleCount("varies.set-aside", 2),)),)
    wrong = (other[0], e * 1.5)  # the leaf without a random draw, which the eager runs agree on: judged
    v = judge(out, wrong, tuple(t.double() for t in out), ref2=out2, origins=origins)
    assert not v.ok and v.leaf == "[1]" and counts(v)["varies.set-aside"] == 2


# ---------------------------------------------------------------------------------------------- NaN and infinities


def test_kind_special():
    e = torch.tensor([INF, INF, 1.0])
    v = judge(e, torch.tensor([INF, -INF, 1.0]), e.double())
    assert not v.ok and "(1,)" in v.detail and "disagrees in kind" in v.detail
    assert counts(v) == {"kind.special": 1}  # element 0, +inf kept, is not charged


def test_kind_no_independent_run():
    e = torch.tensor([NAN, NAN, 1.0, 2.0])
    f = e.double()
    c = torch.tensor([1e30, 5.0, 1.0, 2.0])  # 1e30 >= sqrt(float32's max): eager's square overflowed
    own = own_overflow(True, True, False, False)  # eager's NaN of its own overflow (its record)
    low = dict(fp64_low="float32", origins=own)  # the fp64 run rounds to float32 inside: no independent judge
    v = judge(e, c, f, **low)
    assert not v.ok and "(1,)" in v.detail  # 5.0 is no overflow of anything
    assert counts(v) == {"kind.special": 2, "kind.no-independent-run": 1}
    c[1] = NAN
    v = judge(e, c, f, **low)
    assert v.ok and "rounds to float32 inside" in v.detail
    assert not judge(e, c, f, origins=own).ok  # an independent fp64 run's NaN convicts
    assert not judge(e, c, f, fp64_low="float32").ok  # no overflow of eager's own on record: judged


def test_kind_nan_beyond_float64():
    e = torch.tensor([NAN, NAN, 1.0])
    marks = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64)  # element 0: the fp64 run's own overflow
    c = torch.tensor([0.0, 0.0, 1.0])
    v = judge(e, c, e.double(), fp64_beyond=marks)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"kind.special": 2, "kind.nan-beyond-float64": 1}
    c[1] = NAN
    assert judge(e, c, e.double(), fp64_beyond=marks).ok


def test_kind_eager_right_overflow():
    e = torch.tensor([INF, INF, 1.0])
    f = torch.tensor([1e39, 1e39, 1.0], dtype=torch.float64)  # beyond float32's range: eager's +inf is right
    v = judge(e, torch.tensor([INF, -INF, 1.0]), f)
    assert not v.ok and "(1,)" in v.detail and counts(v) == {"kind.eager-right-overflow": 1}


def test_kind_overflow_order_special():
    e = torch.tensor([1.0, INF, INF, 3e36] + [1.0] * 28)
    c = e.clone()
    c[1] = NAN  # finite terms near the range: +inf and -inf in another order
    c[2] = -INF  # no order makes -inf of them
    v = judge(e, c, e.double(), extreme_inputs=True, origins={"": EagerOrigin(overflow=torch.arange(32) < 3)})
    assert not v.ok and "(2,)" in v.detail
    assert counts(v) == {"kind.special": 2, "kind.overflow-order-special": 1}
    c[2] = INF
    own = {"": EagerOrigin(overflow=torch.arange(32) < 3)}  # eager's infinities are its own overflow
    v = judge(e, c, e.double(), extreme_inputs=True, origins=own)
    assert v.ok and "overflow in another order" in v.detail
    assert not judge(e, c, e.double(), origins=own).ok  # not a special set
    assert not judge(e, c, e.double(), extreme_inputs=True).ok  # an infinity eager did not make of finite terms


def test_kind_nan_beyond_range():
    e = torch.tensor([INF, INF, 1.0])
    marks = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)  # element 0's finite terms pass the range in some order
    c = torch.tensor([NAN, NAN, 1.0])
    v = judge(e, c, e.double(), fp64_beyond=marks)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"kind.special": 2, "kind.nan-beyond-range": 1}


def test_kind_other_rounding():
    e = torch.tensor([NAN, NAN, 1.0])
    walk = torch.tensor([-INF, NAN, 1.0], dtype=torch.float64)  # another rounding: -inf at element 0
    runs = RoundingRuns(noise=(), walk=Antithetic(walk, e.double()), walk_half=None)
    c = torch.tensor([-INF, INF, 1.0])
    v = judge(e, c, e.double(), fp64_rounded=runs)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"kind.special": 2, "kind.other-rounding": 1}
    c[1] = NAN
    v = judge(e, c, e.double(), fp64_rounded=runs)
    assert v.ok and "another rounding" in v.detail


def test_kind_other_rounding_where_the_roundings_split_the_kind():
    """acosh's log form, log(x + sqrt(x*x - 1)), at x = -3570.003 (float32): x + sqrt(...) cancels to within a
    rounding of 0, so eager's NaN, a compiled -inf (an exact 0) or a finite value are each one rounding away; fp64's
    runs under other roundings give NaN and finite values there. At x = -5 every rounding gives NaN: -inf fails."""
    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference, judge_against
    x = torch.tensor([-3570.003173828125, 2.0, -5.0])
    r = eager_reference(lambda t: torch.log(t + torch.sqrt(t * t - 1)), lambda *a: {}, InputSet("given", (x,)))
    got = r.ref.clone()
    got[0] = -INF
    v = judge_against(r, got)
    assert v.ok and counts(v) == {"kind.special": 1, "kind.other-rounding": 1}, v.detail
    got[2] = -INF
    v = judge_against(r, got)
    assert not v.ok and "(2,)" in v.detail


# ---------------------------------------------------------------------------------------------- finite e and f


def test_finite_non_finite():
    e = torch.ones(2, 32)
    e[1, 0] = 3.4e38
    f = e.double()
    f[1, 0] = 3.5e38  # beyond float32: rounds to +inf
    c = e.clone()
    c[0, 0] = c[1, 0] = INF
    v = judge(e, c, f)
    assert not v.ok and "(0, 0)" in v.detail and "non-finite where eager and fp64 are finite" in v.detail
    assert counts(v) == {"finite.non-finite": 1}  # element (1, 0), the infinity fp64 rounds to, is not charged


def test_finite_overflow_order():
    e = torch.tensor([3e38, 1.0, 2.0])
    c = torch.tensor([INF, INF, 2.0])
    v = judge(e, c, e.double())
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.non-finite": 2, "finite.overflow-order": 1}
    c[1] = 1.0
    assert "within 16x of the range of float32" in judge(e, c, e.double()).detail


def test_finite_beyond_range():
    e = torch.tensor([1.0, 1.0, 2.0])
    c = torch.tensor([NAN, NAN, 2.0])
    v = judge(e, c, e.double(), origins=own_overflow(True, False, False))  # element 0: eager's own overflow
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.non-finite": 2, "finite.beyond-range": 1}
    marks = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)  # what another order could do: no evidence
    assert counts(judge(e, c, e.double(), fp64_beyond=marks)) == {"finite.non-finite": 2}
    # a real one: exp(x) overflows eagerly and 1 / inf is 0; compiled's exp(-x) order gives NaN (inf * 0)
    x = torch.tensor([100.0, 1.0, -2.0])
    prog = lambda t: 1 / torch.exp(t) * torch.exp(t / 2) ** 0  # noqa: E731 - exp(100) is inf in float32
    r = eager_reference(prog, lambda *a: {}, InputSet("given", (x,)))
    assert float(r.ref[0]) == 0.0 and bool(overflow_of(r.origins[""])[0]) and not bool(overflow_of(r.origins[""])[1:].any())
    got = r.ref.clone()
    got[0] = NAN
    v = judge_against(r, got)
    assert v.ok and counts(v) == {"finite.non-finite": 1, "finite.beyond-range": 1}
    got[1] = NAN
    assert not judge_against(r, got).ok


def test_finite_edge_of_range():
    e = torch.tensor([1.0, 2.0, 3.0, 4.0])
    c = torch.tensor([INF, NAN, -INF, NAN])
    # element 0: a sum's positive partials at the edge; 1: the same, but only +inf can come of them; 2: after a
    # further op; 3: no partial result near the edge
    v = judge(e, c, e.double(), origins=at_edge(4, plus=(0, 1), after=(2,)))
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.non-finite": 4, "finite.edge-of-range": 2}
    # a leaf whose eager runs differ without a random draw (atomics) is judged by kind, with the same record
    e2, c2 = e.clone(), torch.tensor([INF, 2.0, -INF, 4.0])
    e2[3] = 4.5
    v = judge(e, c2, e.double(), ref2=e2, origins=at_edge(4, plus=(0, 1), after=(2,)))
    assert v.ok and v.kind == NONDETERMINISTIC, v.detail
    assert not judge(e, c2, e.double(), ref2=e2, origins=at_edge(4, plus=(0, 1))).ok
    # a real one: a row sum whose terms of both signs reach the edge in another order (2e38 + 2e38 first)
    x = torch.randn(3, 16, generator=torch.Generator().manual_seed(0))
    x[1, :4] = torch.tensor([2e38, -2e38, 2e38, -2e38])
    r = eager_reference(lambda t: t.sum(-1), lambda *a: {}, InputSet("special-0", (x,)))
    got = r.ref.clone()
    got[1] = NAN
    v = judge_against(r, got)
    assert v.ok and counts(v) == {"finite.non-finite": 1, "finite.edge-of-range": 1}, v.detail
    got[2] = INF
    assert not judge_against(r, got).ok


def test_eager_overflow():
    e = torch.tensor([NAN, INF, 1.0])
    f = torch.tensor([0.3, 1e39, 1.0], dtype=torch.float64)  # element 1: eager is the infinity fp64 rounds to
    v = judge(e, torch.tensor([0.0, INF, 1.0]), f)
    assert v.ok and "eager non-finite where fp64 is finite" in v.detail
    assert counts(v) == {"eager.overflow": 1}  # element 0 only: element 1's +inf is right
    v = judge(e, torch.tensor([0.0, -INF, 1.0]), f)
    assert not v.ok and "(1,)" in v.detail


# ---------------------------------------------------------------------------------------------- the bound


def test_finite_bound():
    e = ones()
    c = e.clone()
    c[3] *= 1.01
    v = judge(e, c, e.double())
    assert not v.ok and "(3,)" in v.detail and counts(v) == {"finite.bound": 1}
    assert judge(e, e * (1 + 2 ** -23), e.double()).ok  # an ulp


def _moved(f: torch.Tensor, at: int, d: float) -> Antithetic:
    plus, minus = f.clone(), f.clone()
    plus[at] += d
    minus[at] -= d
    return Antithetic(plus, minus)


def test_bound_perturbed_inputs():
    e = ones()
    f = e.double()
    c = e.clone()
    c[0] = c[1] = 1 + 1e-4  # beyond the bound (~3e-5 here)
    pairs = (_moved(f, 0, 1e-7),)  # f[0] moves by 1e-7 when the inputs move by 1e-9: S = 1.2e-5 at float32
    v = judge(e, c, f, fp64_perturbed=pairs)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.bound": 2, "bound.perturbed-inputs": 1}
    assert judge(e, c, f, fp64_perturbed=[pairs[0].plus, pairs[0].minus]).detail == v.detail  # a flat list alike


def test_bound_monte_carlo():
    e = ones()
    f = e.double()
    c = e.clone()
    c[0] = c[1] = 1 + 1e-4
    runs = RoundingRuns(noise=(_moved(f, 0, 1e-4),))  # another rounding moves f[0] by 1e-4: weighed 4x
    v = judge(e, c, f, fp64_rounded=runs)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.bound": 2, "bound.monte-carlo": 1}


def test_bound_walk():
    e = ones()
    f = e.double()
    c = e.clone()
    c[0] = c[1] = 1 + 5e-5
    halves = RoundingRuns(walk=_moved(f, 0, 1e-4), walk_half=_moved(f, 0, 5e-5))  # halves with the moves
    v = judge(e, c, f, fp64_rounded=halves)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.bound": 2, "bound.walk": 1}
    whole = RoundingRuns(walk=_moved(f, 0, 1e-4), walk_half=_moved(f, 0, 1e-4))  # a step: no change with the moves
    assert counts(judge(e, c, f, fp64_rounded=whole)) == {"finite.bound": 2}


def test_bound_rounding_step():
    e = ones()
    f = e.double()
    c = e.clone()
    c[0], c[1] = 2.0, 1.5  # element 0: where another rounding's step lands; element 1: between the sides
    step = f.clone()
    step[0] = step[1] = 2.0
    runs = RoundingRuns(noise=(Antithetic(step, f.clone()),))  # one side jumps: no S, a step
    v = judge(e, c, f, fp64_rounded=runs)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.bound": 2, "bound.rounding-step": 1}
    c[1] = 2.0
    v = judge(e, c, f, fp64_rounded=runs)
    assert v.ok and "another rounding of the intermediates (a step it crosses)" in v.detail


def _alternative(field: str):
    e = torch.full((64,), 1e-3)
    f = e.double()
    c = e.clone()
    c[0] = c[1] = 0.0
    alt = f.clone()
    alt[0] = 0.0  # the alternative run gives compiled's value at element 0 only
    v = judge(e, c, f, fp64_rounded=RoundingRuns(**{field: alt}))
    assert not v.ok and "(1,)" in v.detail
    return counts(v)


def test_bound_flushed_subnormals():
    assert _alternative("flushed") == {"finite.bound": 2, "bound.flushed-subnormals": 1}


def test_bound_kept_precision():
    assert _alternative("kept_precision") == {"finite.bound": 2, "bound.kept-precision": 1}


def test_bound_beyond_range():
    e = ones(8)
    c = e.clone()
    c[0] = c[1] = 3.0
    v = judge(e, c, e.double(), origins=own_overflow(*[k == 0 for k in range(8)]))
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.bound": 2, "bound.beyond-range": 1}


def test_bound_edge_of_range():
    e = ones(8)
    c = e.clone()
    c[0] = c[1] = 3.0
    # element 0 depends on a sum at the edge through a further op; element 1 is such a sum's own result (its
    # finite value is judged: another order's overflow gives an infinity there, not 3)
    v = judge(e, c, e.double(), origins=at_edge(8, plus=(1,), after=(0,)))
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"finite.bound": 2, "bound.edge-of-range": 1}


def exact_product(row: torch.Tensor) -> float:
    """The product of a row's finite factors, exactly (rationals), rounded once to float64."""
    return float(math.prod(Fraction(float(v)) for v in row))


def test_product_underflow_order():
    """A dtype sweep's special set in float64 (no wider run: eager is its own reference): rows of factors near
    1e-39 (bfloat16's subnormals) beside -8.99e307 (half of float64's largest value), whose partial products
    fall below float64's smallest normal number in an order that multiplies the small factors first, and
    whose exact product (1e-242) is representable. Eager's order flushed row 0 to 0 where compiled gives the
    exact product; compiled's order flushes row 1; row 2 keeps a subnormal partial that loses bits; row 3 holds
    an infinity, which meets a flushed partial as NaN (eager -inf): each is what an order of the factors gives,
    not judged. Compiled's exact product with its sign flipped, or ten times it, is no order's; a wrong value in
    the row whose factors stay in range is judged as ever."""
    g = torch.Generator().manual_seed(7)
    x = torch.rand(5, 15, dtype=torch.float64, generator=g) + 0.5
    x[:4] = torch.randn(4, 15, dtype=torch.float64, generator=g) * 1e-39
    x[:4, 12] = -torch.finfo(torch.float64).max / 2
    x[3, 2] = INF
    r = eager_reference(lambda t: t.prod(-1, keepdim=True), lambda *a: {}, InputSet("special-0", (x,)))
    exact = [exact_product(row) if bool(torch.isfinite(row).all()) else NAN for row in x]
    assert all(1e-250 < abs(p) < 1e-230 for p in exact[:3])
    e = torch.tensor([[0.0], [exact[1]], [exact[2]], [-INF], [exact[4]]], dtype=torch.float64)  # eager's order
    r = r._replace(ref=e, ref2=e.clone(), fp64=e.clone())  # (a float64 program: the fp64 run is eager's)
    got = e.clone()
    got[0], got[1], got[2], got[3] = exact[0], 0.0, exact[2] * (1 + 3e-11), NAN
    v = judge_against(r, got)
    assert v.ok and counts(v) == {"kind.special": 1, "finite.bound": 3, "product.underflow-order": 4}, v.detail
    for k, wrong in ((0, -exact[0]), (1, 10 * exact[1]), (4, exact[4] * (1 + 1e-9))):
        bad = got.clone()
        bad[k] = wrong
        v = judge_against(r, bad)
        assert not v.ok and f"first at ({k}, 0)" in v.detail, v.detail

    # a cumprod: a blocked scan multiplies 1e-30 · 1e-20 (a run of consecutive factors) first, flushed in float32
    y = torch.tensor([1e30, 1e-30, 1e-20, 1e20, 3.0])
    r = eager_reference(lambda t: torch.cumprod(t, 0), lambda *a: {}, InputSet("special-0", (y,)))
    assert bool((r.ref[2:] != 0).all())  # eager's sequential order: 1e30 · 1e-30 first
    got = r.ref.clone()
    got[2:] = 0.0
    v = judge_against(r, got)
    assert v.ok and counts(v) == {"finite.bound": 3, "product.underflow-order": 3}, v.detail
    got[4] = -3.0
    v = judge_against(r, got)
    assert not v.ok and "first at (4,)" in v.detail, v.detail

    # through a further op, any value (as an overflow's): a flushed product doubled, and compared
    z = torch.tensor([1e-30, 1e20, 1e-20, 3.0])
    r = eager_reference(lambda t: (t.prod() * 2, t.prod() > 0), lambda *a: {}, InputSet("special-0", (z,)))
    assert float(r.ref[0]) > 0 and bool(r.ref[1])  # eager's order, 1e-30 · 1e20 first: 6e-30, not 0
    v = judge_against(r, (torch.tensor(0.0), torch.tensor(False)))
    assert v.ok and counts(v) == {"finite.bound": 1, "bound.edge-of-range": 1, "exact.differs": 1,
                                  "exact.edge-of-range": 1}, v.detail


def test_note_signed_zero():
    e = torch.tensor([-0.0, 0.0, 1.0])
    f = torch.tensor([-0.0, -0.0, 1.0], dtype=torch.float64)  # element 1: eager and fp64 differ in sign
    v = judge(e, torch.tensor([0.0, -0.0, 1.0]), f)
    assert v.ok and "signed zero differs at 1 elements, first at (0,)" in v.detail
    assert counts(v) == {"note.signed-zero": 1}


def test_note_strides():
    e = torch.randn(4, 6)
    v = judge(e, e.t().contiguous().t(), e.double())
    assert v.ok and "strides differ" in v.detail and counts(v) == {"note.strides": 1}
    assert judge(e, e.clone(), e.double()).rules == ()


# ---------------------------------------------------------------------------------------------- integers and indices


def test_exact_differs():
    e = torch.tensor([1, 2, 3])
    v = judge(e, torch.tensor([1, 2, 4]), e)
    assert not v.ok and "(2,)" in v.detail and counts(v) == {"exact.differs": 1}
    assert not judge(3, 4).ok and counts(judge(3, 4)) == {"exact.differs": 1}


def test_exact_beyond_range():
    e = torch.tensor([True, True, False])
    c = torch.tensor([False, False, False])
    v = judge(e, c, origins=own_overflow(True, False, False))  # element 0 compares a sum eager overflowed
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"exact.differs": 2, "exact.beyond-range": 1}
    marks = torch.tensor([2.0, 1.0, 0.0], dtype=torch.float64)  # 2: a NaN converted to an integer in the fp64 run
    assert counts(judge(e, c, fp64_beyond=marks)) == {"exact.differs": 2, "exact.beyond-range": 1}


def test_exact_beyond_range_through_a_reduction_of_undefined_conversions():
    """A dtype sweep made the input int32, holding values up to 2^31 and negatives: x ** 0.5 is up to 46341, or
    NaN, and its conversion to int8 is undefined in C++ there; an argmin over windows of two of those int8
    values is luck wherever a window holds one (eager and compiled convert differently). The record marks the
    windows whose argmin a marked value can change (one more of each, or the dtype's extremes, as a probe):
    compiled's other index there is not judged; in a window of two defined conversions it is."""
    x = torch.randint(0, 16000, (4, 16), dtype=torch.int32, generator=torch.Generator().manual_seed(1))
    x[:2] = torch.randint(-2 ** 31, 2 ** 31 - 1, (2, 16), dtype=torch.int32, generator=torch.Generator().manual_seed(2))
    x[2, 5] = -4  # one NaN in an otherwise defined row

    def prog(t):
        return (t ** 0.5).to(torch.int8).unfold(1, 2, 1).argmin(2).reshape(-1)
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (x,)))
    undefined = ~((x ** 0.5) <= 127).unfold(1, 2, 1).all(-1).reshape(-1)  # a window with a NaN or beyond int8
    assert int(undefined.sum()) == 32 and bool(undefined[34:36].all())  # rows 0 and 1; row 2's windows at 5
    got = torch.where(undefined, 1 - r.ref, r.ref)
    v = judge_against(r, got)
    assert v.ok and counts(v) == {"exact.differs": 32, "exact.beyond-range": 32}, v.detail
    got[40] = 1 - got[40]  # row 2, window 10: two defined conversions
    v = judge_against(r, got)
    assert not v.ok and "first at (40,)" in v.detail, v.detail


def test_exact_beyond_range_of_the_sign_of_a_nan_an_op_made():
    """signbit of 0 * inf: the sign of a NaN result is unspecified (IEEE 754 6.3), so a compiled sign bit that
    differs there is not judged; the finite elements are."""
    from eqsat_test.runners.oracle.inputs import InputSet
    from eqsat_test.runners.oracle.reference import eager_reference, judge_against
    x = torch.tensor([math.inf, 1.0, -2.0, math.inf])
    r = eager_reference(lambda t: torch.signbit(t * 0.0), lambda *a: {}, InputSet("given", (x,)))
    got = ~r.ref
    v = judge_against(r, got)
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"exact.differs": 4, "exact.beyond-range": 2}


def test_exact_edge_of_range():
    e = torch.tensor([True, True, False])
    c = torch.tensor([False, False, False])
    v = judge(e, c, origins=at_edge(3, plus=(1,), after=(0,)))  # element 0 compares a sum at the edge
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"exact.differs": 2, "exact.edge-of-range": 1}


def test_exact_between_runs():
    e, f = torch.tensor([1028, 1028, 5]), torch.tensor([2048, 1028, 5])
    v = judge(e, torch.tensor([2047, 1029, 5]), f)  # element 0 between eager and the fp64 run; element 1 beyond both
    assert not v.ok and "(1,)" in v.detail
    assert counts(v) == {"exact.differs": 2, "exact.between-runs": 1}


def test_index_differs():
    src = torch.linspace(0, 1, 100).reshape(4, 25)
    ref = src.argmax(-1)
    got = ref.clone()
    got[2] -= 1
    v = judge(ref, got, index_info={"": (src, -1)})
    assert not v.ok and "selected values differ" in v.detail and counts(v) == {"index.differs": 1}


def test_index_tie():
    src = torch.tensor([[1e-5, 3e-5, 3e-5], [2.0, 0.5, 2.0], [0.0, 1.0, 0.5]])
    ref = src.argmax(-1)  # [1, 0, 1]
    v = judge(ref, torch.tensor([2, 2, 1]), index_info={"": (src, -1)})
    assert v.ok and "2 tied indices differ" in v.detail and counts(v) == {"index.differs": 2, "index.tie": 2}
    v = judge(ref, torch.tensor([2, 2, 2]), index_info={"": (src, -1)})  # row 2: 0.5 for 1.0
    assert not v.ok and counts(v) == {"index.differs": 3, "index.tie": 2}


# ---------------------------------------------------------------------------------------------- whole outputs again


def test_ties_sort_order():
    g = torch.Generator().manual_seed(8)
    scores = torch.randn(2, 16, generator=g)
    scores[:, :4] = 1.0  # four tied keys per row
    tokens = torch.randn(2, 16, generator=g)
    prog = lambda s, t: torch.take_along_dim(t, torch.argsort(s, dim=1, descending=True), dim=1)  # noqa: E731
    r = eager_reference(prog, lambda *a: {}, InputSet("special-0", (scores, tokens)))
    idx = torch.sort(scores.flip(1), dim=1, descending=True, stable=True)[1]
    got = torch.take_along_dim(tokens, 15 - idx, dim=1)  # ties in reverse order
    v = judge_against(r, got)
    assert v.ok and "tied keys" in v.detail and counts(v)["ties.sort-order"] > 0
    bad = got.clone()
    bad[1, 10] += 1.0  # no tie there
    v = judge_against(r, bad)
    assert not v.ok and "(1, 10)" in v.detail


def test_lenient_wider_run():
    e = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float16)  # floor(...) eagerly
    ref32 = e.float()
    ref32[0] = 2.0  # eager's rounding moved element 0 across the floor's step: the float32 program's 2
    f = e.double()  # (the fp64 run rounds to float16 inside as eager does)
    c = e.clone()
    c[0] = 2.0  # the wider programs' value
    c[1] += 0.5  # within 4% of neither
    v = judge(e, c, f, lenient=(ref32, f))
    assert not v.ok and "(1,)" in v.detail and counts(v)["lenient.wider-run"] == 1
    c[1] = e[1]
    v = judge(e, c, f, lenient=(ref32, f))
    assert v.ok and "excused 1 elements" in v.detail and counts(v) == {"lenient.wider-run": 1}
    assert not judge(e, c, f).ok  # the judge alone convicts it


def test_training_random_stream():
    from eqsat_test.runners.oracle.grad import random_stream
    out, grads = (torch.tensor([0.0, 2.0, 0.0, 2.0]),), (torch.ones(4),)
    drawn_other = ((torch.tensor([2.0, 0.0, 0.0, 2.0]),), (torch.ones(4),))  # another dropout mask
    v = random_stream(judge((out, grads), drawn_other, None), random=True)
    assert (v.ok, v.kind) == (True, NONDETERMINISTIC) and counts(v)["training.random-stream"] == 1
    v = random_stream(judge((out, grads), drawn_other, None), random=False)  # not random: a failure
    assert not v.ok
    wrong_grad = ((out[0].clone(),), (torch.ones(4) * 2,))  # the same draws, another gradient: judged
    v = random_stream(judge((out, grads), wrong_grad, None), random=True)
    assert not v.ok and v.leaf == "[1][0]"

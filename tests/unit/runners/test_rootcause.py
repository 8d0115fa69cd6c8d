"""One root cause, one finding: variant candidates failing like their seed fold into the seed's finding; rules are not blamed."""
from __future__ import annotations

from eqsat_test.runners.findings.rootcause import dedupe, fold_into_seeds


def _f(kind, variant, input_set="given", seed=False, rules=(), error=None):
    return {"kind": kind, "variant": variant, "graph": "g0", "backend": "inductor", "device": "cpu",
            "input_set": input_set, "seed": seed, "rules": list(rules), "ops": ["torch.relu"], "error": error}


def test_variants_failing_like_the_seed_fold_into_it():
    seed = _f("seed-miscompile", "g0_seed", seed=True)
    same = _f("miscompile", "g0_v001", rules=["r1"])
    other_set = _f("miscompile", "g0_v002", input_set="special", rules=["r2"])
    out = fold_into_seeds([seed, same, other_set])
    assert [f.variant for f in out] == ["g0_seed", "g0_v002"]
    assert out[0].variants_failing_alike == ["g0_v001"]
    d = dedupe(out)
    by = {f.variant: f for f in d}
    assert by["g0_seed"].count == 2 and by["g0_seed"].also_seen_in == ["g0_v001"]
    assert by["g0_seed"].rules == []  # no rule blamed for the seed's bug
    assert by["g0_v002"].count == 1


def test_a_variant_candidate_without_a_failing_seed_stays_and_keeps_its_rules():
    out = fold_into_seeds([_f("miscompile", "g0_v001", rules=["r1"])])
    assert len(out) == 1 and out[0].rules == ["r1"]


def test_crashes_fold_only_with_the_same_error_type():
    seed = _f("compile-crash", "g0_seed", seed=True, error={"type": "LoweringException"})
    same = _f("compile-crash", "g0_v001", error={"type": "LoweringException"})
    other = _f("compile-crash", "g0_v002", error={"type": "AssertionError"})
    out = fold_into_seeds([seed, same, other])
    assert [f.variant for f in out] == ["g0_seed", "g0_v002"]

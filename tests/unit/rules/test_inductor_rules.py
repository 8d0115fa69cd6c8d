"""Rules aimed at Inductor's decisions (rules/inductor_patterns.py, inductor_paths.py, layout_detours.py):
each tagged claim holds on the compiler (pattern-matcher counts, kernels called), and the claims name
patterns this torch registers."""
from __future__ import annotations

import fnmatch

import pytest

from eqsat_test.rewrite.patternreach import claimed, registry, rule_reach, unmet
from eqsat_test.rewrite.ruledsl import load_rules

FILES = ["inductor_patterns", "inductor_paths", "layout_detours"]


def _rules():
    return load_rules(FILES)


def test_every_pattern_rule_claims_something_and_names_registered_patterns():
    names = set(registry())
    for r in _rules():
        c = claimed(r)
        if r.family in ("pattern", "fallback") and not r.name.startswith("max_keepdim_values_is_amax"):
            assert c["builds"] | c["breaks"] | c["flips"], f"{r.name}: no builds:/breaks:/flips: tag"
        for p in c["builds"] | c["breaks"]:
            base = p.split("(", 1)[0]
            assert fnmatch.filter(names, base), f"{r.name}: {p} is not a registered pattern"


@pytest.mark.slow  # two Inductor compiles per tagged rule (about 40)
@pytest.mark.parametrize("name", [r.name for r in load_rules(FILES) if any(claimed(r).values())])
def test_tagged_claims_hold_on_the_compiler(name):
    r = next(r for r in _rules() if r.name == name)
    rr = rule_reach(r)
    assert not rr.lhs.error and not rr.rhs.error, (rr.lhs.error, rr.rhs.error)
    assert not unmet(r, rr), f"{name} on {rr.example}: lhs {rr.lhs.patterns} {rr.lhs.kernels}, rhs {rr.rhs.patterns} {rr.rhs.kernels}"

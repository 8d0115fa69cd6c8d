"""Tests for the built-in rule library in rules/: it loads, is large and varied enough, every rule traces and compiles, and every rule passes the soundness checker."""
import ast
import collections
import time

import pytest

from eqsat_test.rewrite.rulecheck import check_rules, summary
from eqsat_test.rewrite.ruledsl import BUILTIN_RULES_DIR, FAMILIES, load_rules, rule_files

MIN_RULES, MIN_FAMILIES, MIN_OPS = 120, 8, 60


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def test_library_loads_with_unique_names(rules):
    assert len({r.name for r in rules}) == len(rules)
    assert len(rules) >= MIN_RULES, f"only {len(rules)} rules"


def test_families(rules):
    fams = collections.Counter(r.family for r in rules)
    assert set(fams) <= set(FAMILIES), set(fams) - set(FAMILIES)
    assert len(fams) >= MIN_FAMILIES, fams


def test_each_file_opens_with_one_line_docstring():
    files = rule_files(BUILTIN_RULES_DIR)
    assert files
    for f in files:
        doc = ast.get_docstring(ast.parse(f.read_text()))
        assert doc, f"{f.name} has no module docstring"
        assert "\n" not in doc.strip(), f"{f.name}: docstring should be one line"


def test_ac_rules_are_tagged(rules):
    for r in rules:
        if "commutes" in r.name or "associates" in r.name:
            assert "ac" in r.tags, f"{r.name} should carry tags=('ac',)"


@pytest.mark.slow  # the whole library, ~100 samples per rule: minutes
def test_every_rule_passes_the_checker(rules):
    t0 = time.perf_counter()
    results = check_rules(rules)
    elapsed = time.perf_counter() - t0
    print(f"\n{summary(results)}\nchecked in {elapsed:.1f}s")
    failed = [r for r in results if not r.ok]
    assert not failed, "\n".join(r.line() for r in failed)


def _pattern_ops(t, out: set) -> set:
    """Call targets in a compiled pattern tree (rewrite/compile_rules.py `_tree`)."""
    if isinstance(t, tuple):
        if len(t) > 1 and t[0] == "call" and isinstance(t[1], str):
            out.add(t[1])
        for x in t:
            _pattern_ops(x, out)
    return out


@pytest.mark.slow  # every rule traced two or three times: minutes with a cold cache
def test_every_rule_traces_fullgraph_compiles_and_covers_enough_ops(rules):
    """The project's rule compiler (which traces both sides with torch.compile(fullgraph=True),
    the way models are captured) accepts every rule of the library; and the library covers at
    least MIN_OPS distinct call targets. Through the compile cache that runs use: it is keyed by
    each rule's source and the torch version, and a rule that fails is never cached, so a cached
    rule is one that compiled; on a fresh machine this test fills the cache for the others."""
    from eqsat_test.rewrite.compile_rules import compile_rules

    t0 = time.perf_counter()
    compiled, errors = compile_rules(rules)
    assert not errors, "\n".join(errors)
    n_bidirectional = sum(r.bidirectional for r in rules)
    assert len(compiled) == len(rules) + n_bidirectional
    ops: set[str] = set()
    for c in compiled:
        _pattern_ops(c.lhs, ops)
        _pattern_ops(c.rhs, ops)
    print(f"\n{len(ops)} distinct ops in {len(rules)} rules (compiled in {time.perf_counter() - t0:.1f}s)")
    assert len(ops) >= MIN_OPS, sorted(ops)

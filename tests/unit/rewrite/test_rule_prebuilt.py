"""The compiled rule library shipped with the package (rewrite/prebuilt/, written by scripts/build_rule_cache.py): a cold cache reads it instead of compiling ~1,400 rules, and each entry is what compiling the rule gives."""
from __future__ import annotations

import json
import random

import pytest
import torch

import eqsat_test.rewrite.compile_rules as cr
from eqsat_test.rewrite.rulecache import CACHE_VERSION, prebuilt_file, read_prebuilt, rule_key
from eqsat_test.rewrite.ruledsl import load_rules

needs_prebuilt = pytest.mark.skipif(not prebuilt_file().is_file(),
                                    reason=f"no compiled rule library shipped for torch {torch.__version__}")
COVERAGE = 0.95  # of the library's rules; fewer: run scripts/build_rule_cache.py after changing rules


@pytest.fixture(scope="module")
def library():
    rules = load_rules(None)
    return rules, read_prebuilt()


@needs_prebuilt
def test_the_shipped_library_covers_the_rules(library):
    rules, shipped = library
    missing = [r.name for r in rules if rule_key(r) not in shipped]
    assert len(missing) <= (1 - COVERAGE) * len(rules), (
        f"{len(missing)} of {len(rules)} rules are not in {prebuilt_file().name}: run scripts/build_rule_cache.py "
        f"(first: {missing[:10]})")


@needs_prebuilt
def test_shipped_entries_are_what_compiling_gives(library):
    rules, shipped = library
    sample = random.Random(0).sample([r for r in rules if rule_key(r) in shipped], 12)
    for r in sample:
        fresh = json.loads(json.dumps([c.to_json() for c in cr.compile_rule(r)]))
        assert fresh == shipped[rule_key(r)], r.name


@needs_prebuilt
def test_a_cold_cache_reads_the_shipped_library(library, tmp_path, monkeypatch):
    rules, shipped = library
    missing = {r.name for r in rules if rule_key(r) not in shipped}
    if len(missing) > (1 - COVERAGE) * len(rules):
        pytest.skip("the shipped library is out of date (see the test above)")
    monkeypatch.setenv("EQSAT_TEST_CACHE", str(tmp_path / "cache"))
    compiled_here: list[str] = []
    real = cr.compile_rule
    monkeypatch.setattr(cr, "compile_rule", lambda r: compiled_here.append(r.name) or real(r))
    logs: list[str] = []
    compiled, errors = cr.compile_rules(rules, jobs=1, log=logs.append)
    assert set(compiled_here) == missing  # only what the shipped file lacks is compiled
    assert any(f"read from {prebuilt_file().name}" in line for line in logs)
    assert len(compiled) >= len(rules) and not errors
    user_cache = json.loads((tmp_path / "cache" / f"compiled-rules-{CACHE_VERSION}.json").read_text())
    assert all(rule_key(r) in user_cache for r in rules)  # the next run reads the user's cache alone

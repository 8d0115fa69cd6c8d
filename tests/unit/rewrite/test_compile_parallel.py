"""Tests for the parallel rule compile (rewrite/compile_rules.py): a pool of processes gives exactly
what compiling one rule after another gives, errors, duplicates and rules not from a file included."""
import textwrap

import pytest
import torch
from conftest import REPO

import eqsat_test.rewrite.compile_rules as cr
from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, load_rules, rule

RULE_FILE = '''
"""Rules for the parallel compile test."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, rule


@rule(family="reduction", numerics="approximate")
def par_mean_is_sum_over_n(x: Tensor(rank=2, dtype=FLOATING)):
    return x.mean(-1), x.sum(-1) / x.shape[-1]


@rule(family="algebra", numerics="exact", bidirectional=True)
def par_mul_scalar_spelling(x: Tensor(dtype=FLOATING), c: Scalar("float")):
    return x * c, torch.mul(x, c)


@rule(family="algebra", numerics="exact")
def par_same_both_sides(x: Tensor()):
    return x + 1, x + 1


@rule(family="algebra", numerics="exact")
def par_not_a_pair(x: Tensor()):
    return x + 1
'''


@rule(family="activation", numerics="exact")
def par_in_memory_relu_twice(x: Tensor(dtype=FLOATING)):
    """Defined here, not in a rule file: a pool worker cannot re-load it; the parent compiles it."""
    return torch.relu(torch.relu(x)), torch.relu(x)


@pytest.mark.slow  # starts a pool of two fresh Python processes (each imports torch)
def test_parallel_compile_equals_serial(tmp_path, monkeypatch):
    f = tmp_path / "par_rules.py"
    f.write_text(textwrap.dedent(RULE_FILE))
    rules = load_rules([str(REPO / "tests" / "user_rules"), str(f)]) + [par_in_memory_relu_twice]
    rules.append(rules[0])  # a rule listed twice compiles once and is returned twice
    serial = cr.compile_rules(rules, use_cache=False, jobs=1)
    assert len(serial[1]) == 2 and len(serial[0]) > len(rules)  # two rules fail, bidirectional ones give two

    in_parent = []
    real = cr.compile_rule
    monkeypatch.setattr(cr, "compile_rule", lambda r: in_parent.append(r.name) or real(r))
    monkeypatch.setenv("EQSAT_TEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cr, "_PARALLEL_MIN", 2)  # as many as a library: compiled under the cache's lock
    assert cr.compile_rules(rules, jobs=2) == serial
    assert in_parent == ["par_in_memory_relu_twice"]  # everything else was compiled by the pool
    assert (tmp_path / "cache" / f"compiled-rules-{cr.CACHE_VERSION}.json.lock").is_file()
    # The pool's results were cached, and read back the same (failures are not cached: compiled again).
    in_parent.clear()
    assert cr.compile_rules(rules, jobs=1) == serial
    assert in_parent == ["par_same_both_sides", "par_not_a_pair"]


def test_a_second_compile_in_one_process_reads_no_cache_file(tmp_path, monkeypatch):
    """`eqsat-test run A.py B.py ...` compiles the rules once per model: after the first, the rules come from this
    process's memory (the cache file is megabytes of JSON), the same as compiling them again; another cache folder
    is its own."""
    rules = load_rules([str(REPO / "tests" / "user_rules")])
    monkeypatch.setenv("EQSAT_TEST_CACHE", str(tmp_path / "one"))
    first = cr.compile_rules(rules, jobs=1)
    reads: list[str] = []
    real = cr.read_cache
    monkeypatch.setattr(cr, "read_cache", lambda f: reads.append(str(f)) or real(f))
    assert cr.compile_rules(load_rules([str(REPO / "tests" / "user_rules")]), jobs=1) == first and reads == []
    assert first == cr.compile_rules(rules, use_cache=False, jobs=1)
    monkeypatch.setenv("EQSAT_TEST_CACHE", str(tmp_path / "two"))
    assert cr.compile_rules(rules, jobs=1) == first and reads  # a fresh cache folder is read (and written)
    assert (tmp_path / "two" / f"compiled-rules-{cr.CACHE_VERSION}.json").is_file()

"""Tests for the built-in rule library in rules/: it loads, is large and varied enough, traces with Dynamo, and every rule passes the soundness checker."""
import ast
import collections
import time

import pytest
import torch
import torch._dynamo

from rewrite.rulecheck import check_rules, find_example, summary
from rewrite.ruledsl import BUILTIN_RULES_DIR, FAMILIES, load_rules, rule_files

MIN_RULES, MIN_FAMILIES, MIN_OPS = 120, 8, 60


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def op_name(node) -> str | None:
    """A readable name for what an FX node calls: `operator.add`, `torch.add`, `Tensor.add`,
    `torch.nn.functional.relu`, `Tensor.T` (attribute access)."""
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op != "call_function":
        return None
    t = node.target
    if t is getattr and len(node.args) > 1 and isinstance(node.args[1], str):
        return f"Tensor.{node.args[1]}"
    mod = getattr(t, "__module__", None) or ""
    mod = {"_operator": "operator", "torch._C._nn": "torch.nn.functional",
           "torch._C._linalg": "torch.linalg", "torch.functional": "torch"}.get(mod, mod)
    return f"{mod}.{getattr(t, '__name__', str(t))}"


def capture_ops(rule) -> set[str]:
    """Trace the rule (both sides) the way the tool captures models: torch.compile with a backend
    that records the FX graph's call targets, fullgraph=True, on real example inputs."""
    example = find_example(rule)
    assert example is not None, f"{rule.name}: no inputs on which both sides run"
    tvars = rule.tensor_vars
    scalars = {k: v for k, v in example.items() if k not in tvars}
    seen: set[str] = set()

    def backend(gm, _inputs):
        for n in gm.graph.nodes:
            name = op_name(n)
            if name:
                seen.add(name)
        return gm.forward

    def both(*tensors):
        return rule.fn(**dict(zip(tvars, tensors)), **scalars)

    torch._dynamo.reset()
    torch.compile(both, backend=backend, fullgraph=True)(*(example[v] for v in tvars))
    return seen


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


def test_rules_trace_fullgraph_and_cover_enough_ops(rules):
    t0 = time.perf_counter()
    ops: set[str] = set()
    failures = []
    for r in rules:
        try:
            ops |= capture_ops(r)
        except Exception as e:  # collect all, report together
            failures.append(f"{r.name}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
    torch._dynamo.reset()
    assert not failures, "rules that do not trace with fullgraph=True:\n" + "\n".join(failures)
    print(f"\n{len(ops)} distinct ops in {len(rules)} rules (traced in "
          f"{time.perf_counter() - t0:.1f}s): {sorted(ops)}")
    assert len(ops) >= MIN_OPS, sorted(ops)


def test_every_rule_passes_the_checker(rules):
    t0 = time.perf_counter()
    results = check_rules(rules)
    elapsed = time.perf_counter() - t0
    print(f"\n{summary(results)}\nchecked in {elapsed:.1f}s")
    failed = [r for r in results if not r.ok]
    assert not failed, "\n".join(r.line() for r in failed)


@pytest.mark.slow
def test_every_rule_compiles_to_rewrites(rules, tmp_path, monkeypatch):
    """The project's rule compiler accepts every rule of the library (no errors, no crashes)."""
    monkeypatch.setenv("EQSAT_TEST_CACHE", str(tmp_path))
    from rewrite.compile_rules import compile_rules

    compiled, errors = compile_rules(rules, use_cache=False)
    assert not errors, "\n".join(errors)
    n_bidirectional = sum(r.bidirectional for r in rules)
    assert len(compiled) == len(rules) + n_bidirectional

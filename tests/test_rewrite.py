"""Rule compilation, saturation budgets and diverse DAG-aware extraction."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import warm_server

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.lower import to_fx
from eqsat_test.lowering.program import CALL
from eqsat_test.rewrite.compile_rules import compile_rule, compile_rules
from eqsat_test.rewrite.extract import extract_variants, read_egraph
from eqsat_test.rewrite.generate import _node_keys
from eqsat_test.rewrite.ruledsl import FLOATING, RuleError, Scalar, Tensor, load_rules, rule
from eqsat_test.rewrite.saturate import Budget, saturate

USER_RULES = Path(__file__).parent / "user_rules"
EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.fixture(scope="module")
def user_rules():
    compiled, errors = compile_rules(load_rules([str(USER_RULES)]), use_cache=False)
    assert not errors
    return compiled


def test_scalar_variables_and_facts():
    @rule(family="spelling", numerics="exact", bidirectional=True)
    def mul_spelling(x: Tensor(dtype=FLOATING), c: Scalar("float")):
        return x * c, torch.mul(x, c)

    fwd, back = compile_rule(mul_spelling)
    assert fwd.lhs[:3] == ("call", "operator.mul", (("var", "x"), ("svar", "c")))
    assert back.lhs[1] == "torch.mul" and fwd.scalar_vars == {"c": "float"}
    # the rhs node's rank and dtype come from x's facts
    assert fwd.rhs[4] == (("var", "x", 0), ("var", "x"))


def test_bare_variable_side_and_bad_rules():
    @rule(family="layout", numerics="exact")
    def dt(x: Tensor(rank=2)):
        return x.t().t(), x

    (c,) = compile_rule(dt)
    assert c.rhs == ("var", "x") and c.lhs[1] == "Tensor.t"

    @rule(family="layout", numerics="exact", bidirectional=True)
    def bad_bidir(x: Tensor(rank=2)):
        return x.t().t(), x

    with pytest.raises(RuleError, match="bare variable"):
        compile_rule(bad_bidir)

    @rule(family="misc", numerics="exact")
    def unbound(x: Tensor(), y: Tensor()):
        return x.relu(), x + y

    with pytest.raises(RuleError, match="not bound"):
        compile_rule(unbound)


def _elementwise():
    from eqsat_test.lowering.load import load_model
    m = load_model(EXAMPLES / "elementwise.py")
    return capture(m.module, m.inputs)[0]


def test_extraction_gives_distinct_equivalent_dag_aware_variants(user_rules):
    g = _elementwise()
    lg = lift_fx(g.gm)
    sat = saturate(lg.program, user_rules, Budget(iterations=6))
    assert sat.fired["user_add_spelling"] > 0 and sat.enodes > len(lg.program.nodes)
    ec = read_egraph(sat.lifted.egraph, sat.lifted.root, lg.program, sat.lifted.node_names)
    ex = extract_variants(ec, 24, seed=1, exclude={lg.program.key()})
    keys = {p.key() for p, _ in ex.variants}
    assert len(ex.variants) == 24 and len(keys) == 24 and lg.program.key() not in keys
    assert {m for _, m in ex.variants} == {"uniform", "near-original"}
    ref = g.gm(*g.inputs)
    for p, _ in ex.variants:
        out = to_fx(p, lg.input_names)(*g.inputs)
        for a, b in zip(ref, out):
            assert torch.allclose(a, b, equal_nan=True)
        # DAG-aware: the model's single torch.exp stays one node in every variant
        assert sum(1 for i in p.reachable() if p.nodes[i].kind == CALL and p.nodes[i].name == "torch.exp") == 1


def test_near_original_stays_closer_than_uniform(user_rules):
    g = _elementwise()
    lg = lift_fx(g.gm)
    sat = saturate(lg.program, user_rules, Budget(iterations=6))
    ec = read_egraph(sat.lifted.egraph, sat.lifted.root, lg.program, sat.lifted.node_names)
    orig = set(_node_keys(lg.program))

    def changed(mode):  # mean number of nodes a variant has that the original does not
        ex = extract_variants(ec, 16, seed=3, modes=(mode,), exclude={lg.program.key()})
        return sum(len(set(_node_keys(p)) - orig) for p, _ in ex.variants) / max(1, len(ex.variants))

    assert changed("near-original") < changed("uniform")


def test_budgets_stop_ac_blowup(user_rules):
    class Sum16(torch.nn.Module):
        def forward(self, *xs):
            acc = xs[0]
            for x in xs[1:]:
                acc = acc + x
            return acc

    g = capture(Sum16(), tuple(torch.randn(3) for _ in range(16)))[0]
    lg = lift_fx(g.gm)
    sat = saturate(lg.program, user_rules, Budget(iterations=50, max_enodes=3000, seconds=20))
    assert sat.stop_reason in ("enodes", "seconds", "saturated", "iterations")
    assert sat.iterations < 50 or sat.stop_reason == "saturated"
    ec = read_egraph(sat.lifted.egraph, sat.lifted.root, lg.program, sat.lifted.node_names)
    ex = extract_variants(ec, 8, seed=0, exclude={lg.program.key()})
    assert len(ex.variants) == 8


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_user_rule_folder_fires_in_a_run(tmp_path):
    out = tmp_path / "bundle"
    r = warm_server().run(["generate", EXAMPLES / "elementwise.py", "--rules", USER_RULES, "-n", "6", "-o", out,
                                      "--json"], cli=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    manifest = json.loads(r.stdout)
    assert manifest["rules"]["fired"].get("user_add_spelling", 0) > 0
    assert any("user_" in name for v in manifest["variants"] for name in v["rules"])
    assert sum(1 for v in manifest["variants"] if not v["seed"]) == 6

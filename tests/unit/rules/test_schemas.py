"""Schema rules generated from rewrite/optables.py: their reach, and two of them at work (a permute through sigmoid, a flip through x - 3), checked like hand-written rules."""
from __future__ import annotations

from collections import Counter

import pytest
import torch

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.rewrite.compile_rules import compile_rules
from eqsat_test.rewrite.extract import extract_variants, read_egraph
from eqsat_test.rewrite.optables import BINARY, LAYOUT, REDUCTIONS, UNARY
from eqsat_test.rewrite.rulecheck import check_rule
from eqsat_test.rewrite.ruledsl import BUILTIN_RULES_DIR, NUMERICS, load_rule_file
from eqsat_test.rewrite.saturate import saturate


@pytest.fixture(scope="module")
def schema_rules():
    return load_rule_file(BUILTIN_RULES_DIR / "schemas.py")


def test_rules_come_from_the_tables(schema_rules):
    names = [r.name for r in schema_rules]
    assert len(names) == len(set(names)) and all(n.startswith("schema_") for n in names)
    assert all(r.family == "schema" and r.numerics in NUMERICS for r in schema_rules)
    kinds = Counter("unary-layout" if "commutes with" in r.doc else
                    "binary-layout" if "of both operands" in r.doc else
                    "scalar-layout" if " with a " in r.doc and "scalar" in r.doc else "other"
                    for r in schema_rules)
    assert kinds["unary-layout"] >= 200 and kinds["binary-layout"] >= 30 and kinds["scalar-layout"] >= 40
    # every table row shows up in some rule
    joined = " ".join(names)
    for row in UNARY + BINARY + LAYOUT + REDUCTIONS:
        assert row.name in joined, row.name
    # numerics classes follow the tables: ops whose vector kernels round differently are approximate
    by_name = {r.name: r for r in schema_rules}
    assert by_name["schema_permute021_through_sigmoid"].numerics == "approximate"
    assert by_name["schema_permute021_through_tanh"].numerics == "exact"
    assert by_name["schema_amax0_of_permute021"].numerics == "ieee-edge"
    assert by_name["schema_sum0_of_permute021"].numerics == "approximate"


def _root_class_targets(fn, inputs, rules):
    class M(torch.nn.Module):
        def forward(self, x):
            return fn(x)

    (g,) = capture(M(), inputs)
    prog = lift_fx(g.gm).program
    compiled, errors = compile_rules(rules)
    assert not errors
    sat = saturate(prog, compiled)
    ec = read_egraph(sat.lifted.egraph, sat.lifted.root, prog, sat.lifted.node_names)
    del sat.lifted.egraph
    (out,) = [n for n in ec.classes[ec.root] if n.fn == "seq"]
    first = ec.classes[ec.classes[out.children[0]][0].children[0]]
    ex = extract_variants(ec, 8, exclude={prog.key()})
    return {n.prim for n in first if n.fn == "call"}, ex


@pytest.mark.parametrize("name,fn,inputs,moved", [
    ("schema_permute021_through_sigmoid", lambda x: torch.sigmoid(x.permute(0, 2, 1)),
     [torch.randn(2, 3, 4)], "Tensor.permute"),
    ("schema_flip_last_through_sub_int_scalar", lambda x: x.flip(-1) - 3, [torch.randn(5, 4)], "Tensor.flip"),
])
def test_a_generated_rule_moves_the_layout_op(schema_rules, name, fn, inputs, moved):
    (r,) = [r for r in schema_rules if r.name == name]
    res = check_rule(r)
    assert res.ok, res.line()
    targets, ex = _root_class_targets(fn, inputs, [r])
    # the output's e-class now also holds the layout op applied last: L(f(x)) == f(L(x))
    assert moved in targets and len(targets) == 2, targets
    assert len(ex.variants) == 1
    (p, _), = ex.variants
    assert p.nodes[p.nodes[p.output].args[0]].name == moved


def test_rules_check_catches_a_wrong_generated_rule_of_each_class():
    """A schema built from the same tables but wrong (the layout op differs between the sides)
    fails `rules check` whichever numerics class it claims."""
    from eqsat_test.rewrite.optables import LAYOUT, UNARY
    from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, make_rule

    lay = {lay.name: lay for lay in LAYOUT}
    ops = {u.name: u for u in UNARY}
    wrong = []
    for numerics, op in (("exact", "tanh"), ("ieee-edge", "relu"), ("approximate", "sigmoid")):
        u, a, b = ops[op], lay["flip0"], lay["flip_last"]

        def body(x, u=u, a=a, b=b):
            return u.fn(a.fn(x)), b.fn(u.fn(x))

        wrong.append(make_rule(f"wrong_{numerics}", body, {"x": Tensor(rank=(2, 3), dtype=FLOATING)},
                               family="schema", numerics=numerics, bidirectional=True))
    for r in wrong:
        res = check_rule(r)
        assert not res.ok and "differ" in (res.counterexample or ""), res.line()

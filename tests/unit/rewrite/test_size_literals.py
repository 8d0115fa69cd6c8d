"""Literals rules derive from shapes (`x.shape[-1]`) become size variables matched against the e-graph's size facts; rank/dtype gating of rule registration."""
from __future__ import annotations

import torch

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.rewrite.compile_rules import compile_rule
from eqsat_test.rewrite.extract import read_egraph
from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule
from eqsat_test.rewrite.saturate import saturate


def _program(fn, *inputs):
    class M(torch.nn.Module):
        def forward(self, *xs):
            return fn(*xs)

    (g,) = capture(M(), list(inputs))
    return lift_fx(g.gm).program


def _root_targets(prog, compiled) -> set[str]:
    sat = saturate(prog, compiled)
    ec = read_egraph(sat.lifted.egraph, sat.lifted.root, prog, sat.lifted.node_names)
    del sat.lifted.egraph
    (out,) = [n for n in ec.classes[ec.root] if n.fn == "seq"]
    lst = ec.classes[out.children[0]][0]  # cons(first output, nil)
    return {n.prim for n in ec.classes[lst.children[0]] if n.fn == "call"}


@rule(family="layout", numerics="exact")
def view_rows_is_flatten(x: Tensor(rank=(3, 4), dtype=FLOATING)):
    return x.view(x.shape[0], -1), x.flatten(1)


def test_shape_literal_compiles_to_a_size_variable():
    (cr,) = compile_rule(view_rows_is_flatten)
    assert list(cr.size_vars.values()) == [("x", 0, "n")]
    (name,) = cr.size_vars
    assert cr.lhs[2][1] == ("svar", name)  # the 3 of view(3, -1) is not a constant
    assert name not in cr.scalar_vars


def test_size_variable_matches_only_the_right_extent():
    (cr,) = compile_rule(view_rows_is_flatten)
    good = _program(lambda x: x.view(3, -1), torch.randn(3, 4, 5))
    assert "Tensor.flatten" in _root_targets(good, [cr])
    good = _program(lambda x: x.view(3, -1) * 2.0, torch.randn(3, 4, 5))
    sat = saturate(good, [cr])
    assert sat.fired["view_rows_is_flatten"] >= 1
    del sat.lifted.egraph
    # view(4, -1) of a (3, 4, 5) tensor is valid, but 4 is not the extent of dim 0: no match
    bad = _program(lambda x: x.view(4, -1) * 2.0, torch.randn(3, 4, 5))
    sat = saturate(bad, [cr])
    assert sat.fired["view_rows_is_flatten"] == 0
    del sat.lifted.egraph


@rule(family="layout", numerics="approximate")
def scale_by_inverse_sqrt_of_last(x: Tensor(rank=(2, 3), dtype=FLOATING)):
    return x * (1 / x.shape[-1] ** 0.5), x / x.shape[-1] ** 0.5


def test_derived_size_literals_and_a_third_trace():
    (cr,) = compile_rule(scale_by_inverse_sqrt_of_last)
    # 1 / n ** 0.5 is the same float as 1 / math.sqrt(n); x.shape[-1] is (x, -1) at both ranks
    assert sorted(cr.size_vars.values()) == [("x", -1, "rsqrt"), ("x", -1, "sqrt")]
    prog = _program(lambda x: x * (1 / 16 ** 0.5), torch.randn(2, 16))
    sat = saturate(prog, [cr])
    assert sat.fired["scale_by_inverse_sqrt_of_last"] >= 1
    del sat.lifted.egraph


@rule(family="layout", numerics="exact", bidirectional=True)
def rank4_only(x: Tensor(rank=4, dtype=FLOATING)):
    return torch.relu(x), torch.relu(x.contiguous())


@rule(family="layout", numerics="exact", bidirectional=True)
def int_only(x: Tensor(dtype=("int32", "int64"))):
    return torch.relu(x), torch.clamp(x, min=0)


@rule(family="layout", numerics="exact", bidirectional=True)
def any_float(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.clamp(x, min=0)


def test_rules_needing_absent_ranks_or_dtypes_are_not_registered():
    crs = compile_rule(rank4_only) + compile_rule(int_only) + compile_rule(any_float)
    prog = _program(lambda x: torch.relu(x) + 1.0, torch.randn(3, 4))
    sat = saturate(prog, crs)
    del sat.lifted.egraph
    # only any_float's two directions: no rank-4 term, no integer term
    assert sat.rules_registered == 2
    assert sat.fired["any_float"] >= 1 and sat.fired["rank4_only"] == 0

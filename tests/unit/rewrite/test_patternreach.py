"""Inductor's pattern registries read, and what a compile reaches (rewrite/patternreach.py)."""
from __future__ import annotations

import pytest
import torch

from eqsat_test.rewrite.patternreach import Reach, RuleReach, kernels_of, reach, registry, unmet
from eqsat_test.rewrite.ruledsl import Tensor, rule


def test_kernels_are_read_from_calls_not_from_comments():
    code = ("# Source Nodes: [softmax], Original ATen: [aten.div, aten._softmax]\n"
            "buf0 = empty_strided_cpu((4, 4), (4, 1), torch.float32)\n"
            "extern_kernels.mm(arg0_1, arg1_1, out=buf0)\n"
            "buf1 = torch.ops.aten.sort.stable(buf0, dim=-1)  # aten.cumsum in a comment\n"
            "buf2 = aten.median.dim(buf0, -1)\n")
    assert kernels_of(code) == {"extern_kernels.mm": 1, "aten.sort": 1, "aten.median": 1}


def test_rule_reach_round_trips_and_says_what_one_side_adds():
    rr = RuleReach("r", Reach({"p": 1, "q": 2}, {"aten.sort": 1}), Reach({"p": 2, "q": 1}, {"extern_kernels.mm": 1}), "x")
    assert RuleReach.from_dict(rr.to_dict()) == rr
    assert rr.built() == {"p"} and rr.broken() == {"q"} and rr.flipped() == {"aten.sort", "extern_kernels.mm"}

    @rule(family="pattern", numerics="exact", tags=("builds:p*", "breaks:r", "flips:aten.sort"))
    def tagged(x: Tensor()):
        return x, x

    assert unmet(tagged, rr) == ["breaks:r"]


def test_the_registry_names_the_softmax_and_attention_patterns():
    names = registry()
    assert "joint_graph.div_softmax_pattern" in names and "joint_graph.mul_softmax_pattern" in names
    assert names["joint_graph.div_softmax_pattern"].roots == ("aten.sub.Tensor",)
    assert any(n.startswith("_sfdp_pattern_1") for n in names)
    assert "post_grad.addmm" in names and "joint_graph.pointless_permute_pair" in names


@pytest.mark.slow  # real Inductor compiles
def test_the_int_softmax_pattern_is_counted_with_its_input_dtype():
    x = torch.tensor([[-128, 127, 0, 1]], dtype=torch.int8)
    direct = reach(lambda x: torch.softmax(x / 0.5, -1), (x,))
    assert direct.patterns.get("joint_graph.div_softmax_pattern(inp=int8)") == 1
    cast_first = reach(lambda x: torch.softmax(x.float() / 0.5, -1), (x,))
    assert cast_first.patterns.get("joint_graph.div_softmax_pattern(inp=float32)") == 1
    assert "joint_graph.div_softmax_pattern(inp=int8)" not in cast_first.patterns
    assert reach(lambda x: x.float().sort(-1).values, (x,)).kernels == {"aten.sort": 1}

"""Pattern rules: move programs into and out of the search forms of Inductor's pattern-matcher passes."""
# Inductor rewrites by pattern (its registries: benchmarks/pattern_reach.py lists them); a program spelled
# one way is matched, an equivalent spelling is not. Each rule here builds a registered search form
# from an equivalent spelling, or breaks it by an equivalent detour, and says which in its tags,
# checked by counting the pass's matches on both sides (rewrite/patternreach.py,
# tests/unit/rules/test_inductor_rules.py): `builds:P` (the right side matches P more often),
# `breaks:P` (less often); `reach:softmax` measures the sides under a softmax, the context the
# pattern needs. Rule sides spell the whole search form where it spans several ops, so that the
# tags can be checked on the rule alone.

import torch

from eqsat_test.rewrite.ruledsl import FLOATING, INTEGRAL, NUMERIC, Scalar, Tensor, make_rule, rule

DIM = Scalar(kind="int", values=(0, 1, -1))
TEMPERATURE = Scalar(kind="float", values=(0.5, 2.0, 3.25, 1e-3))

# ---- joint_graph.py: div_softmax_pattern / mul_softmax_pattern --------------------------------
# Their search form is `scaled - amax(scaled)`, scaled = `inp / other` or `inp * other`, which the
# softmax decomposition makes of `softmax(x / T)`. The replacement subtracts `amax(inp)` from `inp`
# in inp's dtype: an integer `inp` (a cast moved past the scaling) is what it gets wrong.


@rule(family="pattern", numerics="exact", bidirectional=True,
      tags=("reach:softmax", "builds:joint_graph.div_softmax_pattern(inp=int*)"))
def int_div_casts_first(x: Tensor(dtype=INTEGRAL), t: TEMPERATURE):
    """True division of an integer tensor by a float casts it to float32 first: the cast is implied."""
    return x.float() / t, x / t


@rule(family="pattern", numerics="exact", bidirectional=True,
      tags=("reach:softmax", "builds:joint_graph.mul_softmax_pattern(inp=int*)"))
def int_mul_casts_first(x: Tensor(dtype=INTEGRAL), t: TEMPERATURE):
    """An integer tensor times a float is float32: the cast is implied."""
    return x.float() * t, x * t


# `x - x.max(d, keepdim=True).values`, the hand-written stable softmax, becomes amax's form (the search
# form of the softmax patterns and of post_grad's partial-reduction reuse), in each spelling of max
# that models use. They may pick different zeros from a (+0.0, -0.0) tie.
_MAX_SPELLINGS = {
    "method": lambda x, d: x.max(d, keepdim=True).values,
    "method_dim_kw": lambda x, d: x.max(dim=d, keepdim=True).values,
    "function": lambda x, d: torch.max(x, d, keepdim=True).values,
    "function_dim_kw": lambda x, d: torch.max(x, dim=d, keepdim=True).values,
}
for _name, _spell in _MAX_SPELLINGS.items():
    make_rule(f"max_keepdim_values_is_amax_{_name}", lambda x, d, _spell=_spell: (_spell(x, d), x.amax(d, keepdim=True)),
              {"x": Tensor(rank=(1, 2, 3), dtype=NUMERIC), "d": DIM}, family="pattern", numerics="ieee-edge",
              bidirectional=True, source_text=f"max_keepdim_values_is_amax_{_name}|1")


@rule(family="pattern", numerics="ieee-edge", bidirectional=True,
      tags=("builds:joint_graph.div_softmax_pattern",))
def scaled_shift_by_max_values(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), t: TEMPERATURE, d: DIM):
    s = x / t  # one node, used twice: the pattern wants the scaled value shared
    return s - s.max(d, keepdim=True).values, s - s.amax(d, keepdim=True)


@rule(family="pattern", numerics="exact", bidirectional=True,
      tags=("breaks:joint_graph.div_softmax_pattern",))
def scaled_shift_div_is_add_neg(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), t: TEMPERATURE, d: DIM):
    """a - b is a + (-b) in IEEE arithmetic; the pattern looks for the subtraction."""
    s = x / t
    return s - s.amax(d, keepdim=True), s + (-s.amax(d, keepdim=True))


@rule(family="pattern", numerics="exact", bidirectional=True,
      tags=("breaks:joint_graph.mul_softmax_pattern",))
def scaled_shift_mul_is_add_neg(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), t: TEMPERATURE, d: DIM):
    s = x * t
    return s - s.amax(d, keepdim=True), s + (-s.amax(d, keepdim=True))


# ---- fuse_attention.py: _sfdp_pattern_* (scaled dot-product attention) -------------------------
# Pattern 1 is `softmax(q @ k^T / s) @ v`, pattern 2 `softmax(q @ k^T * s) @ v`: other spellings of
# the same attention are not matched and stay three kernels (two extern bmm and a softmax loop).

Q = Tensor(shape=(2, 3, 4, 8), dtype=("float32", "float64"))
K = Tensor(shape=(2, 3, 5, 8), dtype=("float32", "float64"))
V = Tensor(shape=(2, 3, 5, 8), dtype=("float32", "float64"))
SCALE = Scalar(kind="float", values=(2.0, 2.8284271247461903, 0.125))


@rule(family="pattern", numerics="approximate", bidirectional=True, same_shape=False,
      tags=("builds:_sfdp_pattern_1_*",))
def attention_scaled_query_div(q: Q, k: K, v: V, s: SCALE):
    return torch.softmax((q / s) @ k.transpose(-2, -1), -1) @ v, torch.softmax(q @ k.transpose(-2, -1) / s, -1) @ v


@rule(family="pattern", numerics="approximate", bidirectional=True, same_shape=False,
      tags=("builds:_sfdp_pattern_2_*",))
def attention_scaled_query_mul(q: Q, k: K, v: V, s: SCALE):
    return torch.softmax((q * s) @ k.transpose(-2, -1), -1) @ v, torch.softmax(q @ k.transpose(-2, -1) * s, -1) @ v


@rule(family="pattern", numerics="approximate", bidirectional=True, same_shape=False,
      tags=("breaks:_sfdp_pattern_1_*",))
def attention_scores_as_transposed_product(q: Q, k: K, v: V, s: SCALE):
    """(k @ q^T)^T holds the same dot products as q @ k^T, in another layout."""
    return (torch.softmax(q @ k.transpose(-2, -1) / s, -1) @ v,
            torch.softmax((k @ q.transpose(-2, -1)).transpose(-2, -1) / s, -1) @ v)


# ---- joint_graph.py: pointless_convert, pointless_view_pair, pointless_permute_pair, bmm_to_mm -----
# Round trips Inductor removes before lowering; around a reduction they are what reaches the
# pass (and, once removed, a reduction over the original value).


@rule(family="pattern", numerics="exact", bidirectional=True, tags=("builds:joint_graph.pointless_convert",))
def sum_through_float64_round_trip(x: Tensor(rank=(1, 2, 3), dtype="float32"), d: DIM):
    return x.sum(d), x.double().float().sum(d)


@rule(family="pattern", numerics="exact", bidirectional=True, tags=("builds:joint_graph.pointless_convert",))
def amax_through_int64_round_trip(x: Tensor(rank=(1, 2, 3), dtype="int32"), d: DIM):
    return x.amax(d), x.long().int().amax(d)


@rule(family="pattern", numerics="exact", bidirectional=True, tags=("builds:joint_graph.pointless_view_pair",))
def sum_through_flat_view(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM):
    return x.sum(d), x.flatten().view_as(x).sum(d)


@rule(family="pattern", numerics="exact", bidirectional=True, tags=("builds:joint_graph.pointless_view_pair",))
def amax_through_flat_view(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM):
    return x.amax(d), x.flatten().view_as(x).amax(d)


@rule(family="pattern", numerics="exact", bidirectional=True, tags=("builds:joint_graph.pointless_permute_pair",))
def sum_through_permute_round_trip(x: Tensor(rank=3, dtype=NUMERIC), d: DIM):
    return x.sum(d), x.permute(1, 2, 0).permute(2, 0, 1).sum(d)


@rule(family="pattern", numerics="exact", bidirectional=True, tags=("builds:joint_graph.pointless_permute_pair",))
def softmax_through_permute_round_trip(x: Tensor(rank=3, dtype=FLOATING), d: DIM):
    return torch.softmax(x, d), torch.softmax(x.permute(2, 0, 1).permute(1, 2, 0), d)


@rule(family="pattern", numerics="approximate", bidirectional=True, same_shape=False,
      tags=("builds:joint_graph.bmm_to_mm",))
def matmul_as_batch_of_one(x: Tensor(shape=(3, 4), dtype=FLOATING), y: Tensor(shape=(4, 5), dtype=FLOATING)):
    return x @ y, (x.unsqueeze(0) @ y.unsqueeze(0)).squeeze(0)


# ---- post_grad.py: addmm, splitwithsizes_cat_replace -------------------------------------------


@rule(family="pattern", numerics="approximate", same_shape=False, tags=("builds:post_grad.addmm",))
def linear_as_matmul_plus_bias(x: Tensor(shape=(3, 4), dtype=("float32", "float64")),
                               w: Tensor(shape=(5, 4), dtype=("float32", "float64")),
                               b: Tensor(shape=(5,), dtype=("float32", "float64"))):
    """post_grad folds `mm + bias` into addmm; F.linear lowers to addmm without the pass. One way:
    F.linear checks its operands' shapes, the sum broadcasts."""
    return torch.nn.functional.linear(x, w, b), x @ w.t() + b


@rule(family="pattern", numerics="approximate", bidirectional=True,
      tags=("builds:post_grad.splitwithsizes_cat_replace",))
def sum_through_split_cat(x: Tensor(rank=(1, 2, 3), dtype=NUMERIC, min_size=2)):
    """Split along the last dimension in two and joined again: the same values, in a contiguous copy
    (which eager sums in another order than a strided input)."""
    n = x.shape[-1]
    return x.sum(-1), torch.cat(torch.split(x, [n // 2, n - n // 2], -1), -1).sum(-1)

"""Op tables that rule schemas are generated from: pointwise ops, layout/view ops, reductions.

`rules/schemas.py` takes the products of these tables (a pointwise op commutes with a layout op,
distributes over cat/stack/chunk, a reduction moves through a permutation, ...) and generates one
`@rule` per pair, each with its numerics class, checked by `rules check` like any other rule.
Adding a row here adds its whole row of rules. Every function is written the way models write it,
because rules match spellings (`F.relu` and `torch.relu` are different call targets).

Numerics: pointwise ops compute each element on its own, so moving a layout op through them
leaves every value in place — bitwise, except for the ops marked `vec_sensitive`, whose
vectorized CPU kernel and scalar tail loop round differently (measured on torch 2.13: sigmoid,
silu, gelu, softplus, elu, mish, ... differ by an ulp between `f(x[:, 1:])` and `f(x)[:, 1:]`).
Rules moving a layout op through those are `approximate`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, BOOL, FLOATING, INTEGRAL, NUMERIC, SIGNED

# ---- pointwise ops -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unary:
    """A pointwise op of one tensor: `fn(x)`, defined on `dtypes`."""

    name: str
    fn: Callable
    dtypes: tuple
    vec_sensitive: bool = False  # vectorized and scalar kernels round differently
    common: bool = True  # also moved through the less common layout ops and cat/stack/chunk
    rounds: bool = True  # the result is rounded (so f(x16).float() != f(x16.float()))


UNARY = (
    Unary("relu", lambda x: F.relu(x), NUMERIC, rounds=False),
    Unary("torch_relu", lambda x: torch.relu(x), NUMERIC, common=False, rounds=False),
    Unary("sigmoid", lambda x: torch.sigmoid(x), FLOATING, vec_sensitive=True),
    Unary("tanh", lambda x: torch.tanh(x), FLOATING),
    Unary("exp", lambda x: torch.exp(x), FLOATING),
    Unary("log", lambda x: torch.log(x), FLOATING, common=False),
    Unary("sqrt", lambda x: torch.sqrt(x), FLOATING, common=False),
    Unary("rsqrt", lambda x: torch.rsqrt(x), FLOATING, vec_sensitive=True, common=False),
    Unary("erf", lambda x: torch.erf(x), FLOATING, common=False),
    Unary("sin", lambda x: torch.sin(x), FLOATING, common=False),
    Unary("cos", lambda x: torch.cos(x), FLOATING, common=False),
    Unary("reciprocal", lambda x: torch.reciprocal(x), FLOATING, common=False),
    Unary("expm1", lambda x: torch.expm1(x), FLOATING, common=False),
    Unary("log1p", lambda x: torch.log1p(x), FLOATING, common=False),
    Unary("floor", lambda x: torch.floor(x), FLOATING, common=False, rounds=False),
    Unary("round", lambda x: torch.round(x), FLOATING, common=False, rounds=False),
    Unary("gelu", lambda x: F.gelu(x), FLOATING, vec_sensitive=True),
    Unary("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), FLOATING, vec_sensitive=True,
          common=False),
    Unary("silu", lambda x: F.silu(x), FLOATING, vec_sensitive=True),
    Unary("softplus", lambda x: F.softplus(x), FLOATING, vec_sensitive=True, common=False),
    Unary("elu", lambda x: F.elu(x), FLOATING, vec_sensitive=True, common=False),
    Unary("mish", lambda x: F.mish(x), FLOATING, vec_sensitive=True, common=False),
    Unary("hardswish", lambda x: F.hardswish(x), FLOATING, common=False),
    Unary("hardsigmoid", lambda x: F.hardsigmoid(x), FLOATING, common=False),
    Unary("leaky_relu", lambda x: F.leaky_relu(x, 0.01), FLOATING),
    Unary("relu6", lambda x: F.relu6(x), FLOATING, common=False, rounds=False),
    Unary("hardtanh", lambda x: F.hardtanh(x), FLOATING, common=False, rounds=False),
    Unary("abs", lambda x: torch.abs(x), NUMERIC, rounds=False),
    Unary("neg", lambda x: -x, SIGNED, rounds=False),
    Unary("square", lambda x: torch.square(x), NUMERIC, common=False),
    Unary("sign", lambda x: torch.sign(x), NUMERIC, common=False, rounds=False),
    Unary("logical_not", lambda x: torch.logical_not(x), ANY_DTYPE, common=False, rounds=False),
    Unary("bitwise_not", lambda x: ~x, INTEGRAL + BOOL, common=False, rounds=False),
    Unary("isnan", lambda x: torch.isnan(x), FLOATING, common=False, rounds=False),
    Unary("to_float32", lambda x: x.float(), ANY_DTYPE, common=False, rounds=False),
    Unary("to_float64", lambda x: x.to(torch.float64), NUMERIC, common=False, rounds=False),
)


@dataclass(frozen=True)
class Binary:
    """A pointwise op of two tensors (`fn(x, y)`); `scalar` is the op with a Python number on
    the right (`fn_scalar(x, c)`), `scalar_kinds` the number kinds it is generated for."""

    name: str
    fn: Callable
    dtypes: tuple
    scalar_kinds: tuple = ("float",)
    vec_sensitive: bool = False
    common: bool = True  # also crossed with the tier-2 layout ops
    zero_ties: bool = False  # picks between +0.0 and -0.0 by position (maximum/minimum)


BINARY = (
    Binary("add", lambda x, y: x + y, NUMERIC, ("float", "int")),
    Binary("sub", lambda x, y: x - y, NUMERIC, ("float", "int")),
    Binary("mul", lambda x, y: x * y, NUMERIC, ("float", "int")),
    Binary("div", lambda x, y: x / y, FLOATING, ("float", "int")),
    Binary("maximum", lambda x, y: torch.maximum(x, y), NUMERIC, (), zero_ties=True),
    Binary("minimum", lambda x, y: torch.minimum(x, y), NUMERIC, (), common=False, zero_ties=True),
    Binary("pow", lambda x, y: x ** y, FLOATING, ("float",), vec_sensitive=True, common=False),
)

# ---- layout / view ops ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """A layout or view op `fn(x)` valid on tensors of `ranks` (each of whose extents is at
    least `min_size`). `broadcast_safe`: `L(x) op L(y) == L(x op y)` holds for broadcasting
    operands of those ranks (permutations and flips on dims counted from the same end, leading
    unsqueezes; not reshapes or slices, which see the operands' own extents); `same_rank`: only
    when both operands have the same rank. `tier`: how widely it is crossed with the pointwise
    ops (1: every op; 2: the common ones and scalar operands; 3: the common unary ops only), to
    keep the library's size (and `rules check` time) in proportion."""

    name: str
    fn: Callable
    ranks: tuple
    tier: int = 1
    broadcast_safe: bool = False
    same_rank: bool = False
    min_size: int = 1


LAYOUT = (
    Layout("t", lambda x: x.t(), (2,), 2, broadcast_safe=True),
    Layout("transpose01", lambda x: x.transpose(0, 1), (3,), 2, broadcast_safe=True),
    Layout("transpose_last2", lambda x: x.transpose(-1, -2), (2, 3, 4), 1, broadcast_safe=True),
    Layout("permute201", lambda x: x.permute(2, 0, 1), (3,), 2, broadcast_safe=True),
    Layout("permute021", lambda x: x.permute(0, 2, 1), (3,), 2, broadcast_safe=True),
    Layout("permute0213", lambda x: x.permute(0, 2, 1, 3), (4,), 1, broadcast_safe=True),
    Layout("permute0231", lambda x: x.permute(0, 2, 3, 1), (4,), 2, broadcast_safe=True),
    Layout("permute0312", lambda x: x.permute(0, 3, 1, 2), (4,), 3, broadcast_safe=True),
    Layout("flip0", lambda x: x.flip(0), (1, 2, 3), 2, broadcast_safe=True, same_rank=True),
    Layout("flip_last", lambda x: x.flip(-1), (1, 2, 3, 4), 1, broadcast_safe=True),
    Layout("reshape_flat", lambda x: x.reshape(-1), (2, 3, 4), 1),
    Layout("flatten1", lambda x: x.flatten(1), (3, 4), 2),
    Layout("view_rows", lambda x: x.view(x.shape[0], -1), (3, 4), 3),
    Layout("unsqueeze0", lambda x: x.unsqueeze(0), (1, 2, 3), 2, broadcast_safe=True, same_rank=True),
    Layout("unsqueeze_last", lambda x: x.unsqueeze(-1), (1, 2, 3), 3, broadcast_safe=True),
    Layout("expand_lead", lambda x: x.expand(2, -1, -1), (2,), 3, broadcast_safe=True),
    Layout("slice_from1", lambda x: x[1:], (1, 2, 3), 3),
    Layout("stride2_last", lambda x: x[..., ::2], (1, 2, 3, 4), 3),
    Layout("select0", lambda x: x[0], (2, 3), 3),
    Layout("roll_last", lambda x: x.roll(1, -1), (1, 2, 3), 3),
)

# ---- reductions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reduction:
    """A reduction method `x.<method>(dim)` (or with keepdim=True) on `dtypes`. `order_free`:
    the result does not depend on the order elements are visited (max/min/any/all: bitwise
    under reversal; float sums are not). `index`: the result is a position (argmax/argmin), so
    flips change it. `tuple_dims`: accepts a tuple of dims."""

    name: str
    dtypes: tuple
    order_free: bool = True
    index: bool = False
    tuple_dims: bool = True
    zero_ties: bool = False  # which of +0.0 and -0.0 it returns depends on the visiting order

    def fn(self, x, d, keepdim: bool = False):
        """`x.<name>(d)`, or `x.<name>(d, keepdim=True)`: the spellings models use."""
        m = getattr(x, self.name)
        return m(d, keepdim=True) if keepdim else m(d)

    def full(self, x):
        return getattr(x, self.name)()


REDUCTIONS = (
    Reduction("sum", NUMERIC, order_free=False),
    Reduction("prod", ("float32", "float64"), order_free=False, tuple_dims=False),  # halves overflow midway
    Reduction("mean", FLOATING, order_free=False),
    Reduction("amax", NUMERIC, zero_ties=True),
    Reduction("amin", NUMERIC, zero_ties=True),
    Reduction("argmax", NUMERIC, index=True, tuple_dims=False),
    Reduction("argmin", NUMERIC, index=True, tuple_dims=False),
    Reduction("any", BOOL),
    Reduction("all", BOOL),
)

# Spellings of reductions over one dim that models use (`torch.sum(x, dim=1)`,
# `x.mean(dim=-1, keepdim=True)`), each generated as an exact rule to `x.<name>(d)` /
# `x.<name>(d, keepdim=True)`: (name, dtypes, has a keepdim form, has a torch.<name> form).
REDUCTION_SPELLINGS = (
    ("sum", NUMERIC, True, True), ("mean", FLOATING, True, True), ("amax", NUMERIC, True, True),
    ("amin", NUMERIC, True, True), ("argmax", NUMERIC, True, True), ("argmin", NUMERIC, True, True),
    ("any", BOOL, True, True), ("all", BOOL, True, True), ("prod", FLOATING, True, True),
    ("logsumexp", FLOATING, True, True), ("std", FLOATING, True, True), ("var", FLOATING, True, True),
    ("cumsum", NUMERIC, False, True), ("cumprod", FLOATING, False, True), ("softmax", FLOATING, False, True),
    ("log_softmax", FLOATING, False, True),
)

# Single ops the stress family wraps in fusion boundaries and exact dtype round trips, spelled
# as the corpus models call them: (name, fn, parameter specs as (kind, arg) pairs). Tensor
# parameters are ("T", shape) (an example shape) or ("T", None); scalars ("S", kind, values).
OP_FORMS = (
    ("conv2d", lambda x, w, b, s, p: torch.conv2d(x, w, b, (s, s), (p, p), (1, 1), 1),
     {"x": ("T", (2, 3, 5, 5)), "w": ("T", (4, 3, 3, 3)), "b": ("T", (4,)),
      "s": ("S", "int", (1, 2)), "p": ("S", "int", (1, 0))}),
    ("conv2d_no_bias", lambda x, w, s, p: torch.conv2d(x, w, None, (s, s), (p, p), (1, 1), 1),
     {"x": ("T", (2, 3, 5, 5)), "w": ("T", (4, 3, 3, 3)), "s": ("S", "int", (1, 2)), "p": ("S", "int", (1, 0))}),
    ("conv1d", lambda x, w, b, s, p: torch.conv1d(x, w, b, (s,), (p,), (1,), 1),
     {"x": ("T", (2, 3, 5)), "w": ("T", (4, 3, 3)), "b": ("T", (4,)), "s": ("S", "int", (1, 2)),
      "p": ("S", "int", (1, 0))}),
    ("conv_transpose2d", lambda x, w, b, s, p: torch.conv_transpose2d(x, w, b, (s, s), (p, p), (1, 1), 1, (1, 1)),
     {"x": ("T", (2, 3, 5, 5)), "w": ("T", (3, 4, 3, 3)), "b": ("T", (4,)), "s": ("S", "int", (2, 3)),
      "p": ("S", "int", (1, 0))}),
    ("max_pool2d_kw", lambda x, k, s, p: F.max_pool2d(x, kernel_size=k, stride=s, padding=p),
     {"x": ("T", (2, 3, 6, 7)), "k": ("S", "int", (3, 2)), "s": ("S", "int", (2, 1)), "p": ("S", "int", (1, 0))}),
    ("bmm", lambda a, b: torch.bmm(a, b), {"a": ("T", (2, 3, 4)), "b": ("T", (2, 4, 5))}),
    ("matmul3", lambda a, b: torch.matmul(a, b), {"a": ("T", (2, 3, 4)), "b": ("T", (2, 4, 5))}),
    ("linear3", lambda x, w, b: F.linear(x, w, b), {"x": ("T", (2, 3, 4)), "w": ("T", (5, 4)), "b": ("T", (5,))}),
    ("relu6", lambda x: F.relu6(x), {"x": ("T", None)}),
    ("cross_entropy", lambda x, t: F.cross_entropy(x, t), {"x": ("T", (3, 4)), "t": ("I", (3,))}),
    ("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
     {"q": ("T", (2, 3, 4, 5)), "k": ("T", (2, 3, 7, 5)), "v": ("T", (2, 3, 7, 5))}),
    ("sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     {"q": ("T", (2, 3, 4, 5)), "k": ("T", (2, 3, 7, 5)), "v": ("T", (2, 3, 7, 5))}),
    ("layer_norm", lambda x, w, b, eps: F.layer_norm(x, x.shape[-1:], w, b, eps),
     {"x": ("T", (2, 3, 4)), "w": ("T", (4,)), "b": ("T", (4,)), "eps": ("S", "float", (1e-5, 1e-6))}),
    ("cumsum_kw", lambda x, d: torch.cumsum(x, dim=d), {"x": ("T", None), "d": ("S", "int", (-1, 0))}),
    ("logsumexp_kw", lambda x, d: torch.logsumexp(x, dim=d), {"x": ("T", None), "d": ("S", "int", (-1, 0))}),
    ("mean_dims_keepdim", lambda x: x.mean(dim=(2, 3), keepdim=True), {"x": ("T", (2, 3, 4, 5))}),
    ("index_select", lambda x, i: torch.index_select(x, 0, i), {"x": ("T", (5, 3)), "i": ("I", (4,))}),
    ("index_pair", lambda x, a, b: x[a, b], {"x": ("T", (5, 3)), "a": ("I", (4,)), "b": ("I", (4,))}),
    ("index_columns", lambda x, i: x[:, i], {"x": ("T", (5, 3)), "i": ("I", (4,))}),
    ("bucketize", lambda x, b: torch.bucketize(x, b), {"x": ("T", None), "b": ("T", (5,))}),
    ("searchsorted_right", lambda b, x: torch.searchsorted(b, x, right=True), {"b": ("T", (5,)), "x": ("T", None)}),
    ("scatter_reduce_amax", lambda x, i, v: x.scatter_reduce(0, i, v, reduce="amax", include_self=False),
     {"x": ("T", (5, 3)), "i": ("I", (4, 3)), "v": ("T", (4, 3))}),
    ("scatter_add", lambda x, i, v: x.scatter_add(0, i, v), {"x": ("T", (5, 3)), "i": ("I", (4, 3)), "v": ("T", (4, 3))}),
    ("tensor_unfold", lambda x, d, k, s: x.unfold(d, k, s),
     {"x": ("T", (2, 3, 6, 7)), "d": ("S", "int", (2, 3)), "k": ("S", "int", (2, 3)), "s": ("S", "int", (1, 2))}),
    ("im2col", lambda x, k, p: F.unfold(x, kernel_size=k, padding=p),
     {"x": ("T", (2, 3, 5, 6)), "k": ("S", "int", (3, 2)), "p": ("S", "int", (1, 0))}),
    ("matmul_3x2", lambda a, b: torch.matmul(a, b), {"a": ("T", (2, 3, 4)), "b": ("T", (4, 5))}),
    ("matmul_2x3", lambda a, b: torch.matmul(a, b), {"a": ("T", (3, 4)), "b": ("T", (2, 4, 5))}),
    ("cross_entropy_weighted_smoothed", lambda x, t, w, ls: F.cross_entropy(x, t, weight=w, label_smoothing=ls),
     {"x": ("T", (3, 4)), "t": ("I", (3,)), "w": ("T", (4,)), "ls": ("S", "float", (0.1, 0.2))}),
    ("embedding_bag_sum", lambda i, w, o: F.embedding_bag(i, w, o, None, 2.0, False, "sum", False, None, False, None),
     {"w": ("T", (5, 3)), "i": ("I", (4,)), "o": ("I", (2,))}),

    ("group_norm", lambda x, g, w, b, eps: F.group_norm(x, g, w, b, eps),
     {"x": ("T", (2, 4, 3, 5)), "g": ("S", "int", (2, 1)), "w": ("T", (4,)), "b": ("T", (4,)),
      "eps": ("S", "float", (1e-5, 1e-6))}),
    ("batch_norm", lambda x, rm, rv, w, b, eps: F.batch_norm(x, rm, rv, w, b, False, 0.1, eps),
     {"x": ("T", (2, 4, 3, 5)), "rm": ("T", (4,)), "rv": ("T", (4,)), "w": ("T", (4,)), "b": ("T", (4,)),
      "eps": ("S", "float", (1e-5, 1e-3))}),
)

# Operand shapes matmul is spelled three ways for (`torch.matmul(a, b)`, `a @ b`, `a.matmul(b)`):
# broadcasting batch dims, vectors, and ranks beyond what rules/linalg.py covers.
MATMUL_SHAPES = (
    ("3x2", (2, 3, 4), (4, 5)), ("2x3", (3, 4), (2, 4, 5)), ("1x3", (4,), (2, 4, 5)),
    ("3x1", (2, 3, 4), (4,)), ("4x4", (2, 3, 4, 5), (2, 3, 5, 7)), ("4x2", (2, 3, 4, 5), (5, 7)),
)

# Permutations reductions are moved through: (name, permutation) by rank.
PERMUTATIONS = {
    2: (("t", (1, 0)),),
    3: (("permute201", (2, 0, 1)), ("permute021", (0, 2, 1))),
    4: (("permute0213", (0, 2, 1, 3)),),
}


def permute_call(x, perm):
    """`x.t()` for the rank-2 swap, else `x.permute(*perm)`; identity permutations are x."""
    if list(perm) == sorted(perm):
        return x
    if len(perm) == 2:
        return x.t()
    return x.permute(*perm)

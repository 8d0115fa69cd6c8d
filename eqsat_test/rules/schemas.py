"""Schema rules generated from the op tables of rewrite/optables.py: pointwise ops through layout ops, cat/stack/chunk, scalar broadcasts, reductions through permutations."""
from __future__ import annotations

import torch

from eqsat_test.rewrite.optables import (
    BINARY,
    LAYOUT,
    MATMUL_SHAPES,
    PERMUTATIONS,
    REDUCTION_SPELLINGS,
    REDUCTIONS,
    UNARY,
    permute_call,
)
from eqsat_test.rewrite.ruledsl import FLOATING, INTEGRAL, Scalar, Tensor, make_rule

FAMILY = "schema"

# Pairs the hand-written library already has (rules/layout.py, rules/reduction.py).
_HAND_WRITTEN = {
    ("unary", "torch_relu", "t"), ("unary", "neg", "t"), ("unary", "exp", "t"),
    ("unary", "sigmoid", "t"), ("unary", "tanh", "t"),
    ("binary", "add", "t"), ("binary", "sub", "t"), ("binary", "mul", "t"), ("binary", "div", "t"),
    ("binary", "maximum", "t"),
    ("perm", "sum", "t", 0), ("perm", "sum", "t", 1), ("perm", "amax", "t", 0),
    ("perm", "argmax", "t", 0), ("perm", "any", "t", 0),
}


def _src(*objs) -> str:
    """What the table entries' functions compute (their bytecode, constants and names): keys the
    compiled-rule cache. (Not their source text: reading it costs a second per library load.)"""
    out = []
    for o in objs:
        c = getattr(o, "__code__", None)
        out.append(f"{c.co_code.hex()}|{c.co_consts!r}|{c.co_names!r}" if c is not None else repr(o))
    return "\n".join(out)


def _dtypes(*domains) -> tuple:
    """The dtypes in every one of `domains`, in the first one's order."""
    first, *rest = domains
    return tuple(d for d in first if all(d in r for r in rest))


def _rule(name, body, params, numerics, *, bidirectional=True, same_shape=True, doc="", src=(),
          tags=()):
    return make_rule(f"schema_{name}", body, params, family=FAMILY, numerics=numerics,
                     bidirectional=bidirectional, same_shape=same_shape, doc=doc,
                     tags=tags, source_text=f"{name}|{numerics}|{params!r}|" + _src(*src))


# ---- pointwise (unary) x layout ------------------------------------------------------------------


# Layout ops whose result is not contiguous although a pointwise op applied after them is (the op
# writes a fresh, dense tensor): `u(L(x))` -> `L(u(x))` would put a non-contiguous tensor into a
# class that a program's `.view(...)` may read ("view size is not compatible with input tensor's
# size and stride"), so these rules go one way only, towards the contiguous form.
_STRIDED_RESULT = ("expand_lead", "stride2_last")


def _unary_through_layout(u, lay):
    if lay.name in _STRIDED_RESULT:
        def body(x):
            return lay.fn(u.fn(x)), u.fn(lay.fn(x))
    else:
        def body(x):
            return u.fn(lay.fn(x)), lay.fn(u.fn(x))

    one_way = lay.name in _STRIDED_RESULT
    return _rule(f"{lay.name}_through_{u.name}", body,
                 {"x": Tensor(rank=lay.ranks, dtype=u.dtypes, min_size=lay.min_size)},
                 "approximate" if u.vec_sensitive else "exact", bidirectional=not one_way,
                 doc=f"{u.name} commutes with {lay.name}" + (" (one way: towards the contiguous form)" if one_way else ""),
                 src=(u.fn, lay.fn) + (("one way: layout op first",) if one_way else ()))


# the tier-3 layout ops (rarer next to pointwise ops in models) only with the commonest activations
_TIER3_OPS = ("relu", "sigmoid", "gelu", "silu")
for _lay in LAYOUT:
    for _u in UNARY:
        if _lay.tier == 3 and _u.name not in _TIER3_OPS:
            continue
        if (_u.common or _lay.tier == 1) and ("unary", _u.name, _lay.name) not in _HAND_WRITTEN:
            _unary_through_layout(_u, _lay)


# ---- pointwise (binary) x layout: both operands, or a scalar operand -------------------------------


def _binary_through_layout(b, lay, ranks):
    def body(x, y):
        return b.fn(lay.fn(x), lay.fn(y)), lay.fn(b.fn(x, y))

    suffix = f"_rank{ranks[0]}" if lay.same_rank and len(lay.ranks) > 1 else ""
    return _rule(f"{lay.name}_through_{b.name}{suffix}", body,
                 {"x": Tensor(rank=ranks, dtype=b.dtypes), "y": Tensor(rank=ranks, dtype=b.dtypes)},
                 _binary_numerics(b), same_shape=False,
                 doc=f"{lay.name} of both operands of {b.name} (broadcasting included)",
                 src=(b.fn, lay.fn))


def _scalar_through_layout(b, lay, kind):
    def body(x, c):
        return b.fn(lay.fn(x), c), lay.fn(b.fn(x, c))

    return _rule(f"{lay.name}_through_{b.name}_{kind}_scalar", body,
                 {"x": Tensor(rank=lay.ranks, dtype=b.dtypes, min_size=lay.min_size),
                  "c": Scalar(kind=kind)},
                 _binary_numerics(b),
                 doc=f"{lay.name} through {b.name} with a {kind} scalar", src=(b.fn, lay.fn))


def _binary_numerics(b) -> str:
    return "approximate" if b.vec_sensitive else "ieee-edge" if b.zero_ties else "exact"


for _lay in LAYOUT:
    for _b in BINARY:
        wide = _b.common and _lay.tier <= 2
        if (_lay.broadcast_safe and (_lay.tier == 1 or (wide and _b.name != "maximum"))
                and ("binary", _b.name, _lay.name) not in _HAND_WRITTEN):
            if _lay.same_rank:
                for _r in _lay.ranks:
                    _binary_through_layout(_b, _lay, (_r,))
            else:
                _binary_through_layout(_b, _lay, _lay.ranks)
        for _kind in _b.scalar_kinds:
            if _lay.tier == 1 or (wide and _kind == "float" and _b.name != "div"):
                _scalar_through_layout(_b, _lay, _kind)


# ---- scalar operands broadcast: x op c == x op full_like(x, c) -----------------------------------


def _scalar_is_full_like(b, kind):
    def body(x, c):
        return b.fn(x, c), b.fn(x, torch.full_like(x, c))

    # a float scalar keeps an integer tensor's op in floating point; full_like would not
    dtypes = _dtypes(b.dtypes, ("float32", "float64") if kind == "float" else INTEGRAL + ("float32", "float64"))
    return _rule(f"{b.name}_{kind}_scalar_is_full_like", body,
                 {"x": Tensor(dtype=dtypes), "c": Scalar(kind=kind)}, "exact",
                 doc="a scalar operand broadcast as a full tensor", src=(b.fn,))


for _b in BINARY:
    if _b.name in ("add", "sub", "mul", "div"):
        for _kind in _b.scalar_kinds:
            _scalar_is_full_like(_b, _kind)


# ---- pointwise ops distribute over cat / stack / chunk ---------------------------------------------

_DIM = Scalar(kind="int", values=(0, -1))


def _through_cat(u):
    def body(x, y, d):
        return u.fn(torch.cat([x, y], d)), torch.cat([u.fn(x), u.fn(y)], d)

    dt = _dtypes(u.dtypes, FLOATING)
    # operands of different float dtypes: cat promotes first, so an op that rounds rounds
    # in another precision
    return _rule(f"cat_through_{u.name}", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=dt), "y": Tensor(rank=(1, 2, 3), dtype=dt), "d": _DIM},
                 "approximate" if (u.vec_sensitive or u.rounds) else "exact",
                 doc=f"{u.name} of a cat is the cat of {u.name}s", src=(u.fn,))


def _through_stack(u):
    def body(x, y, d):
        return u.fn(torch.stack([x, y], d)), torch.stack([u.fn(x), u.fn(y)], d)

    dt = _dtypes(u.dtypes, FLOATING)
    return _rule(f"stack_through_{u.name}", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=dt), "y": Tensor(rank=(1, 2, 3), dtype=dt), "d": _DIM},
                 "approximate" if (u.vec_sensitive or u.rounds) else "exact",
                 doc=f"{u.name} of a stack is the stack of {u.name}s", src=(u.fn,))


def _through_chunk(u):
    def body(x, d):
        return u.fn(x).chunk(2, d)[0], u.fn(x.chunk(2, d)[0])

    # one way: a chunk is a strided view, the op of a chunk a fresh contiguous tensor (see
    # _STRIDED_RESULT)
    return _rule(f"chunk_through_{u.name}", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=u.dtypes), "d": _DIM},
                 "approximate" if u.vec_sensitive else "exact", bidirectional=False,
                 doc=f"the first chunk of {u.name}(x) is {u.name} of the first chunk", src=(u.fn,))


def _scalar_through_cat(b):
    def body(x, y, d, c):
        return b.fn(torch.cat([x, y], d), c), torch.cat([b.fn(x, c), b.fn(y, c)], d)

    return _rule(f"cat_through_{b.name}_scalar", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=FLOATING), "y": Tensor(rank=(1, 2, 3), dtype=FLOATING),
                  "d": _DIM, "c": Scalar(kind="float")},
                 "approximate", doc=f"{b.name} by a scalar distributes over cat", src=(b.fn,))


for _u in UNARY:
    if _u.common:
        _through_cat(_u)
        _through_stack(_u)
        _through_chunk(_u)
for _b in BINARY:
    if _b.name in ("add", "mul"):
        _scalar_through_cat(_b)


# ---- reductions: dims under permutations, keepdim, flips, flattening, nesting, spellings --------


def _exactness(r, *, reorders: bool) -> str:
    """Float sums and means visited in another order are not bitwise equal; max/min visited in
    another order may return the other zero of a (+0.0, -0.0) tie."""
    if reorders and not r.order_free:
        return "approximate"
    return "ieee-edge" if (reorders and r.zero_ties) else "exact"


def _perm_reduce(r, pname, perm, d):
    rank = len(perm)
    src_dim = perm[d]
    rest = [p for i, p in enumerate(perm) if i != d]  # remaining source dims, in output order
    order = [sorted(rest).index(p) for p in rest]

    # One way, from the permuted reduction to the reduction of the permuted tensor: a reduction
    # writes a fresh contiguous tensor, its permutation is not (see _STRIDED_RESULT).
    def body(x):
        return permute_call(r.fn(x, src_dim), order), r.fn(permute_call(x, perm), d)

    dt = r.dtypes
    return _rule(f"{r.name}{d}_of_{pname}", body, {"x": Tensor(rank=rank, dtype=dt)},
                 _exactness(r, reorders=True), bidirectional=False,
                 doc=f"{r.name} over dim {src_dim}, permuted, is {r.name} over dim {d} of the "
                     f"permuted tensor (one way: towards the contiguous form)",
                 src=(r.name, "one way: permutation last"))


def _perm_reduce_keepdim(r, pname, perm, d):
    def body(x):  # (one way, as _perm_reduce)
        return permute_call(r.fn(x, perm[d], True), perm), r.fn(permute_call(x, perm), d, True)

    return _rule(f"{r.name}{d}_keepdim_of_{pname}", body, {"x": Tensor(rank=len(perm), dtype=r.dtypes)},
                 _exactness(r, reorders=True), bidirectional=False,
                 doc="keepdim reductions keep the permutation (one way: towards the contiguous form)",
                 src=(r.name, "one way: permutation last"))


def _keepdim_is_unsqueeze(r):
    def body(x, d):
        return r.fn(x, d, True), r.fn(x, d).unsqueeze(d)

    return _rule(f"{r.name}_keepdim_is_unsqueeze", body,
                 {"x": Tensor(rank=(2, 3), dtype=r.dtypes), "d": Scalar(kind="int", values=(0, 1, -1))},
                 "exact", src=(r.name,))


def _flip_invariant(r):
    def body(x, d):
        return r.fn(x.flip(d), d), r.fn(x, d)

    return _rule(f"{r.name}_of_flip_same_dim", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=r.dtypes), "d": Scalar(kind="int", values=(0, -1))},
                 _exactness(r, reorders=True), src=(r.name,))


def _full_of_flat(r):
    def body(x):
        return r.fn(x.reshape(-1), 0), r.full(x)

    return _rule(f"{r.name}_full_is_{r.name}_of_flat", body, {"x": Tensor(rank=(2, 3), dtype=r.dtypes)},
                 _exactness(r, reorders=True), src=(r.name,))


def _nested_order(r):
    def body(x):
        return r.fn(r.fn(x, 1), 0), r.fn(r.fn(x, 0), 0)

    return _rule(f"{r.name}_nested_order_rank3", body, {"x": Tensor(rank=3, dtype=r.dtypes)},
                 _exactness(r, reorders=True), src=(r.name,))


def _tuple_is_nested(r):
    def body(x):
        return r.fn(x, (0, 1)), r.fn(r.fn(x, 1), 0)

    return _rule(f"{r.name}_dims01_is_nested", body, {"x": Tensor(rank=(2, 3), dtype=r.dtypes)},
                 _exactness(r, reorders=True), src=(r.name,))


def _dim_keyword(r):
    def body(x, d):
        return r.fn(x, d), getattr(x, r.name)(dim=d)

    return _rule(f"{r.name}_dim_keyword", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=r.dtypes), "d": Scalar(kind="int", values=(0, -1))},
                 "exact", src=(r.name,))


def _negative_dim(r, rank):
    def body(x):
        return r.fn(x, -1), r.fn(x, rank - 1)

    return _rule(f"{r.name}_last_dim_rank{rank}", body, {"x": Tensor(rank=rank, dtype=r.dtypes)},
                 "exact", src=(r.name,))


for _r in REDUCTIONS:
    for _rank, _perms in PERMUTATIONS.items():
        for _k, (_pname, _perm) in enumerate(_perms):
            for _d in (0, _rank - 1):
                if ("perm", _r.name, _pname, _d) not in _HAND_WRITTEN:
                    _perm_reduce(_r, _pname, _perm, _d)
            if _rank >= 3 and _k == 0:
                _perm_reduce_keepdim(_r, _pname, _perm, _rank - 1)
    _keepdim_is_unsqueeze(_r)
    if not _r.index:
        _flip_invariant(_r)
        _nested_order(_r)
        if _r.tuple_dims:
            _tuple_is_nested(_r)
    _full_of_flat(_r)
    _dim_keyword(_r)
    for _rank in (2, 3):
        _negative_dim(_r, _rank)


# ---- spellings of reductions: torch.R(x, dim=d), x.R(dim=d, keepdim=True), ... -> x.R(d) ----------

# forms the hand-written library already has (rules/spelling.py, rules/reduction.py)
_HAND_SPELLED = {("torch_pos", "sum"), ("torch_pos", "mean"), ("torch_pos", "amax"), ("torch_pos", "prod"),
                 ("torch_pos", "argmax"), ("torch_pos", "var"), ("torch_pos", "softmax"),
                 ("method_kw", "sum")} | {("method_kw", r.name) for r in REDUCTIONS}
_SPELL_DIM = Scalar(kind="int", values=(-1, 0, 1))


def _spelling(kind, name, dtypes, lhs, rhs):
    def body(x, d):
        return lhs(x, d), rhs(x, d)

    return _rule(f"{name}_{kind}_spelling", body,
                 {"x": Tensor(rank=(1, 2, 3), dtype=dtypes), "d": _SPELL_DIM}, "exact",
                 doc=f"{name}: {kind.replace('_', ' ')} spelling", src=(name, kind))


for _name, _dts, _keep, _torch in REDUCTION_SPELLINGS:
    def _m(x, d, _n=_name):
        return getattr(x, _n)(d)

    def _mk(x, d, _n=_name):
        return getattr(x, _n)(d, keepdim=True)

    if ("method_kw", _name) not in _HAND_SPELLED:
        _spelling("method_kw", _name, _dts, lambda x, d, _n=_name: getattr(x, _n)(dim=d), _m)
    if _torch:
        _spelling("torch_kw", _name, _dts, lambda x, d, _n=_name: getattr(torch, _n)(x, dim=d), _m)
        if ("torch_pos", _name) not in _HAND_SPELLED:
            _spelling("torch_pos", _name, _dts, lambda x, d, _n=_name: getattr(torch, _n)(x, d), _m)
    if _keep:
        _spelling("method_kw_keepdim", _name, _dts,
                  lambda x, d, _n=_name: getattr(x, _n)(dim=d, keepdim=True), _mk)
        if _torch:
            _spelling("torch_kw_keepdim", _name, _dts,
                      lambda x, d, _n=_name: getattr(torch, _n)(x, dim=d, keepdim=True), _mk)


def _dims_kw(name, dtypes):
    def body(x):
        return getattr(x, name)(dim=(2, 3), keepdim=True), getattr(x, name)((-2, -1), keepdim=True)

    return _rule(f"{name}_spatial_dims_keepdim_spelling", body, {"x": Tensor(rank=4, dtype=dtypes)}, "exact",
                 doc=f"{name} over the last two dims of a 4-d tensor, as (2, 3) or (-2, -1)", src=(name,))


def _dims_nested(name, dtypes, numerics):
    def body(x):
        return getattr(x, name)((-2, -1), keepdim=True), getattr(getattr(x, name)(-1, keepdim=True), name)(-2, keepdim=True)

    return _rule(f"{name}_last_two_dims_is_nested", body, {"x": Tensor(rank=(2, 3, 4), dtype=dtypes)}, numerics,
                 doc=f"{name} over two dims, one dim at a time", src=(name,))


for _name, _dts, _num in (("mean", FLOATING, "approximate"), ("sum", FLOATING, "approximate"),
                          ("amax", FLOATING, "exact"), ("amin", FLOATING, "exact")):
    _dims_kw(_name, _dts)
    _dims_nested(_name, _dts, _num)


# ---- matmul spellings for more operand shapes ----------------------------------------------------

for _name, _sa, _sb in MATMUL_SHAPES:
    _mm = {"a": Tensor(shape=_sa, dtype=FLOATING), "b": Tensor(shape=_sb, dtype=FLOATING)}
    _rule(f"matmul_{_name}_torch_is_operator", lambda a, b: (torch.matmul(a, b), a @ b), _mm, "exact",
          src=("torch.matmul", _name))
    _rule(f"matmul_{_name}_method_is_operator", lambda a, b: (a.matmul(b), a @ b), _mm, "exact",
          src=("Tensor.matmul", _name))

"""Compiler-stress rewrites: same math, different work for Inductor (fusion boundaries, memory formats, views vs copies, dtype round trips, index forms, split reductions, explicit broadcasts)."""
import torch
import torch.nn.functional as F

from eqsat_test.rewrite.optables import BINARY, LAYOUT, OP_FORMS, UNARY
from eqsat_test.rewrite.ruledsl import FLOATING, NUMERIC, Scalar, Tensor, make_rule, rule

FAM = "stress"


def _gen(name, body, params, numerics="exact", bidirectional=False, same_shape=True, doc="", key=""):
    return make_rule(f"stress_{name}", body, params, family=FAM, numerics=numerics,
                     bidirectional=bidirectional, same_shape=same_shape, doc=doc,
                     source_text=f"stress|{name}|{numerics}|{bidirectional}|{params!r}|{key}")


def _key(fn) -> str:
    c = fn.__code__
    return f"{c.co_code.hex()}|{c.co_consts!r}|{c.co_names!r}"


# ---- fusion boundaries: a copy after an op (clone_is_identity in rules/neutral.py removes them) ----

_COMMON = [u for u in UNARY if u.common]
for _u in _COMMON:
    def _clone_after(x, _u=_u):
        return _u.fn(x), _u.fn(x).clone()

    _gen(f"clone_after_{_u.name}", _clone_after, {"x": Tensor(dtype=_u.dtypes)},
         doc="a fusion boundary after the op", key=_key(_u.fn))

for _b in BINARY:
    if _b.name in ("add",):  # (on every arithmetic op of an e-graph, these grow it fastest)
        def _clone_after_binary(x, y, _b=_b):
            return _b.fn(x, y), _b.fn(x, y).clone()

        _gen(f"clone_after_{_b.name}", _clone_after_binary,
             {"x": Tensor(dtype=_b.dtypes), "y": Tensor(dtype=_b.dtypes)}, same_shape=False,
             key=_key(_b.fn))


@rule(family=FAM, numerics="exact")
def clone_after_matmul(x: Tensor(shape=(2, 3, 4), dtype=FLOATING), y: Tensor(shape=(4, 5), dtype=FLOATING)):
    return x @ y, (x @ y).clone()


@rule(family=FAM, numerics="exact")
def clone_after_linear(x: Tensor(shape=(3, 4), dtype=FLOATING), w: Tensor(shape=(5, 4), dtype=FLOATING),
                       b: Tensor(shape=(5,), dtype=FLOATING)):
    return F.linear(x, w, b), F.linear(x, w, b).clone()


@rule(family=FAM, numerics="exact")
def clone_after_softmax(x: Tensor(dtype=FLOATING), d: Scalar(kind="int", values=(-1, 0, 1))):
    return F.softmax(x, dim=d), F.softmax(x, dim=d).clone()


@rule(family=FAM, numerics="exact")
def clone_after_layer_norm(x: Tensor(shape=(3, 4), dtype=FLOATING), w: Tensor(shape=(4,), dtype=FLOATING),
                           b: Tensor(shape=(4,), dtype=FLOATING), eps: Scalar(kind="float", values=(1e-5, 1e-6))):
    return F.layer_norm(x, x.shape[-1:], w, b, eps), F.layer_norm(x, x.shape[-1:], w, b, eps).clone()


@rule(family=FAM, numerics="exact")
def clone_after_conv2d(x: Tensor(shape=(2, 3, 5, 5), dtype=FLOATING), w: Tensor(shape=(4, 3, 3, 3), dtype=FLOATING),
                       p: Scalar(kind="int", values=(1, 0))):
    return (torch.conv2d(x, w, None, (1, 1), (p, p), (1, 1), 1),
            torch.conv2d(x, w, None, (1, 1), (p, p), (1, 1), 1).clone())


@rule(family=FAM, numerics="exact")
def clone_after_batch_norm(x: Tensor(shape=(2, 4, 3, 5), dtype=FLOATING), rm: Tensor(shape=(4,), dtype=FLOATING),
                           rv: Tensor(shape=(4,), dtype=FLOATING), w: Tensor(shape=(4,), dtype=FLOATING),
                           b: Tensor(shape=(4,), dtype=FLOATING), eps: Scalar(kind="float", values=(1e-5, 1e-3))):
    return (F.batch_norm(x, rm, rv, w, b, False, 0.1, eps),
            F.batch_norm(x, rm, rv, w, b, False, 0.1, eps).clone())


@rule(family=FAM, numerics="exact")
def clone_after_sum(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: Scalar(kind="int", values=(-1, 0))):
    return x.sum(d), x.sum(d).clone()


@rule(family=FAM, numerics="exact")
def clone_after_mean(x: Tensor(rank=(2, 3), dtype=FLOATING), d: Scalar(kind="int", values=(-1, 0))):
    return x.mean(d), x.mean(d).clone()


# ---- views made copies: a contiguous copy after a view that changes strides ----------------------
# The copy is `clone(memory_format=torch.contiguous_format)`, not `.contiguous()`: a program's own
# `L(x).contiguous()` (`y.transpose(1, 2).contiguous().view(b, t, c)`) is the same e-node as the
# rhs `.contiguous()` would be, so the rule would put L(x) itself into the class that `view` reads
# and extraction could then feed the view a non-contiguous tensor ("view size is not compatible").

for _lay in LAYOUT:
    if _lay.name in ("t", "transpose01", "transpose_last2", "permute201", "permute021", "permute0213",
                     "permute0231", "permute0312", "expand_lead", "stride2_last", "slice_from1", "select0"):
        def _contig(x, _lay=_lay):
            return _lay.fn(x), _lay.fn(x).clone(memory_format=torch.contiguous_format)

        _gen(f"contiguous_after_{_lay.name}", _contig,
             {"x": Tensor(rank=_lay.ranks, min_size=2)}, doc="the view materialized",
             key=_key(_lay.fn) + "|clone-contiguous-format")


@rule(family=FAM, numerics="exact", bidirectional=True)
def reshape_flat_is_contiguous_view(x: Tensor(rank=(2, 3, 4))):
    return x.reshape(-1), x.contiguous().view(-1)


@rule(family=FAM, numerics="exact", bidirectional=True)
def flatten1_is_reshape_rows(x: Tensor(rank=(3, 4))):
    return x.flatten(1), x.reshape(x.shape[0], -1)


@rule(family=FAM, numerics="exact")
def view_rows_is_flatten1(x: Tensor(rank=(3, 4))):
    """One way: view raises where flatten copies."""
    return x.view(x.shape[0], -1), x.flatten(1)


@rule(family=FAM, numerics="exact")
def expand_lead_is_repeat(x: Tensor(rank=2)):
    """One way: the repeat is contiguous, the expand is not (a program's `.view` of the repeat
    would fail on the expand)."""
    return x.unsqueeze(0).expand(3, -1, -1), x.unsqueeze(0).repeat(3, 1, 1)


@rule(family=FAM, numerics="exact", bidirectional=True)
def transpose_is_permute_last2_rank4(x: Tensor(rank=4)):
    return x.transpose(1, 2), x.permute(0, 2, 1, 3)


# ---- memory formats: channels-last round trips ---------------------------------------------------

_CL = torch.channels_last
for _u in _COMMON:
    def _cl(x, _u=_u):
        return _u.fn(x), _u.fn(x.contiguous(memory_format=_CL)).contiguous()

    _gen(f"channels_last_round_trip_{_u.name}", _cl, {"x": Tensor(rank=4, dtype=_u.dtypes)},
         numerics="approximate" if _u.vec_sensitive else "exact",
         doc="computed in channels-last memory format, converted back", key=_key(_u.fn))


def _conv_cl(x, w, b, p):
    # converted back: a channels-last result would break a `.view(n, -1)` that reads the conv
    return (torch.conv2d(x, w, b, (1, 1), (p, p), (1, 1), 1),
            torch.conv2d(x.contiguous(memory_format=_CL), w, b, (1, 1), (p, p), (1, 1), 1).contiguous())


def _conv_cl_nobias(x, w, p):
    return (torch.conv2d(x, w, None, (1, 1), (p, p), (1, 1), 1),
            torch.conv2d(x.contiguous(memory_format=_CL), w, None, (1, 1), (p, p), (1, 1), 1).contiguous())


for _dt in ("float32", "float64"):
    _gen(f"conv2d_channels_last_input_{_dt}", _conv_cl,
         {"x": Tensor(shape=(2, 3, 5, 5), dtype=_dt), "w": Tensor(shape=(4, 3, 3, 3), dtype=_dt),
          "b": Tensor(shape=(4,), dtype=_dt), "p": Scalar(kind="int", values=(1, 0))},
         numerics="approximate", key=_key(_conv_cl))
    _gen(f"conv2d_no_bias_channels_last_round_trip_{_dt}", _conv_cl_nobias,
         {"x": Tensor(shape=(2, 3, 5, 5), dtype=_dt), "w": Tensor(shape=(4, 3, 3, 3), dtype=_dt),
          "p": Scalar(kind="int", values=(1, 0))},
         numerics="approximate", key=_key(_conv_cl_nobias))


@rule(family=FAM, numerics="exact")
def batch_norm_channels_last_round_trip(x: Tensor(shape=(2, 4, 3, 5), dtype=("float32", "float64")),
                                        rm: Tensor(shape=(4,), dtype=("float32", "float64")),
                                        rv: Tensor(shape=(4,), dtype=("float32", "float64")),
                                        w: Tensor(shape=(4,), dtype=("float32", "float64")),
                                        b: Tensor(shape=(4,), dtype=("float32", "float64"))):
    return (F.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-05),
            F.batch_norm(x.contiguous(memory_format=torch.channels_last), rm, rv, w, b, False, 0.1, 1e-05).contiguous())


# ---- exact dtype round trips and wider arithmetic ------------------------------------------------

for _u in _COMMON:
    def _rt(x, _u=_u):
        return _u.fn(x), _u.fn(x.to(torch.float64).to(torch.float32))

    _gen(f"float64_round_trip_into_{_u.name}", _rt, {"x": Tensor(dtype="float32")},
         numerics="approximate" if _u.vec_sensitive else "exact",
         doc="float32 -> float64 -> float32 is exact (but the copy may change the op's vector "
             "alignment)", key=_key(_u.fn))


@rule(family=FAM, numerics="exact")
def bfloat16_round_trip_into_add(x: Tensor(dtype="bfloat16"), y: Tensor(dtype="bfloat16")):
    return x + y, x.to(torch.float32).to(torch.bfloat16) + y


@rule(family=FAM, numerics="exact")
def int32_round_trip_into_add(x: Tensor(dtype="int32"), y: Tensor(dtype="int32")):
    return x + y, x.long().int() + y


@rule(family=FAM, numerics="exact")
def add_in_float64_rounds_back(x: Tensor(dtype="float32"), y: Tensor(dtype="float32")):
    """float64 holds float32 sums exactly enough that rounding back gives the float32 sum. (One
    way: the float64 op it makes would be rewritten again by every arithmetic rule.)"""
    return x + y, (x.double() + y.double()).float()


@rule(family=FAM, numerics="exact")
def mul_in_float64_rounds_back(x: Tensor(dtype="float32"), y: Tensor(dtype="float32")):
    return x * y, (x.double() * y.double()).float()


@rule(family=FAM, numerics="approximate")
def exp_in_float64_rounds_back(x: Tensor(dtype="float32")):
    return torch.exp(x), torch.exp(x.double()).float()


for _dt in ("float16", "bfloat16"):
    def _sm_half(x, d, _dt=_dt):
        return F.softmax(x, dim=d), F.softmax(x.float(), dim=d).to(getattr(torch, _dt))

    _gen(f"softmax_in_float32_for_{_dt}", _sm_half,
         {"x": Tensor(dtype=_dt), "d": Scalar(kind="int", values=(-1, 0))}, numerics="approximate",
         bidirectional=True, key=_key(_sm_half))


# ---- index forms ---------------------------------------------------------------------------------


@rule(family=FAM, numerics="exact", bidirectional=True)
def flip0_is_index_select_arange(x: Tensor(rank=(1, 2, 3))):
    return x.flip(0), x.index_select(0, torch.arange(x.shape[0] - 1, -1, -1))


@rule(family=FAM, numerics="exact", bidirectional=True)
def slice_from1_is_narrow(x: Tensor(rank=(1, 2, 3))):
    return x[1:], x.narrow(0, 1, x.shape[0] - 1)


@rule(family=FAM, numerics="exact", bidirectional=True)
def select0_is_narrow_squeeze(x: Tensor(rank=(2, 3))):
    return x.select(0, 0), x.narrow(0, 0, 1).squeeze(0)


@rule(family=FAM, numerics="exact", bidirectional=True)
def last_column_is_narrow(x: Tensor(rank=(2, 3))):
    return x[..., -1], x.narrow(-1, x.shape[-1] - 1, 1).squeeze(-1)


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def amax_is_gather_argmax(x: Tensor(rank=(2, 3), dtype=FLOATING), d: Scalar(kind="int", values=(-1, 0))):
    """The value at the first maximum: amax may return the other zero of a (+0.0, -0.0) tie."""
    return x.amax(d), x.gather(d, x.argmax(d, keepdim=True)).squeeze(d)


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def amin_is_gather_argmin(x: Tensor(rank=(2, 3), dtype=FLOATING), d: Scalar(kind="int", values=(-1, 0))):
    return x.amin(d), x.gather(d, x.argmin(d, keepdim=True)).squeeze(d)


@rule(family=FAM, numerics="exact")
def index_select_is_advanced_index(x: Tensor(shape=(5, 3)), i: Tensor(shape=(4,), dtype="int64")):
    """One way: advanced indexing accepts negative indices, index_select does not."""
    return x.index_select(0, i), x[i]


# ---- reductions split into partial reductions ---------------------------------------------------


@rule(family=FAM, numerics="approximate", bidirectional=True)
def sum_last_is_two_partial_sums(x: Tensor(rank=(1, 2, 3), dtype=FLOATING)):
    n = x.shape[-1]
    return x.sum(-1), x.narrow(-1, 0, n // 2).sum(-1) + x.narrow(-1, n // 2, n - n // 2).sum(-1)


@rule(family=FAM, numerics="exact", bidirectional=True)
def sum_last_int_is_two_partial_sums(x: Tensor(rank=(1, 2, 3), dtype="int64")):
    n = x.shape[-1]
    return x.sum(-1), x.narrow(-1, 0, n // 2).sum(-1) + x.narrow(-1, n // 2, n - n // 2).sum(-1)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def mean_last_is_partial_sums_over_n(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64"))):
    n = x.shape[-1]
    return x.mean(-1), (x.narrow(-1, 0, n // 2).sum(-1) + x.narrow(-1, n // 2, n - n // 2).sum(-1)) / n


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def amax_last_is_two_overlapping_partials(x: Tensor(rank=(1, 2, 3), dtype=FLOATING)):
    """The halves overlap by one element for odd extents (max is idempotent), and are never empty."""
    n = x.shape[-1]
    return x.amax(-1), torch.maximum(x.narrow(-1, 0, n - n // 2).amax(-1), x.narrow(-1, n // 2, n - n // 2).amax(-1))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def sum_first_is_two_partial_sums(x: Tensor(rank=(2, 3), dtype=FLOATING)):
    n = x.shape[0]
    return x.sum(0), x.narrow(0, 0, n // 2).sum(0) + x.narrow(0, n // 2, n - n // 2).sum(0)


# ---- broadcasting made explicit -----------------------------------------------------------------

for _b in BINARY:
    if _b.name in ("add", "sub", "mul", "div", "maximum"):
        def _bcast(x, y, _b=_b):
            a, b = torch.broadcast_tensors(x, y)
            return _b.fn(x, y), _b.fn(a, b)

        # A higher-rank tensor and a vector (a bias, a scale): where broadcasting surely happens.
        # (Not every pair: on every add of an e-graph this rule would grow it by half again. Not
        # 0-dim operands: those take no part in type promotion, their broadcast copies would.)
        _gen(f"{_b.name}_of_broadcast_tensors", _bcast,
             {"x": Tensor(rank=(2, 3, 4), dtype=_b.dtypes), "y": Tensor(shape=(1,), dtype=_b.dtypes)},
             same_shape=False, numerics="ieee-edge" if _b.zero_ties else "exact", bidirectional=True,
             doc="operands broadcast explicitly first", key=_key(_b.fn))


@rule(family=FAM, numerics="exact", bidirectional=True, same_shape=False)
def bias_add_is_expanded_rank2(x: Tensor(shape=(3, 4), dtype=FLOATING), b: Tensor(shape=(4,), dtype=FLOATING)):
    return x + b, x + b.unsqueeze(0).expand(x.shape[0], -1)


# ---- single ops of the corpus: a fusion boundary after them, on their first operand, and an
# exact float64 round trip of their first operand (table: rewrite/optables.py OP_FORMS) -----------


def _params(spec: dict, float_dtype=FLOATING) -> dict:
    out = {}
    for k, v in spec.items():
        if v[0] == "T":
            out[k] = Tensor(shape=v[1], dtype=float_dtype) if v[1] else Tensor(dtype=float_dtype)
        elif v[0] == "I":
            out[k] = Tensor(shape=v[1], dtype="int64")
        else:
            out[k] = Scalar(kind=v[1], values=v[2])
    return out


# (embedding bags: valid index/offset samples are too rare for more than one rule to be checked)
_AFTER_ONLY = {"embedding_bag_sum"}
for _name, _op, _spec in OP_FORMS:
    _first = next(k for k, v in _spec.items() if v[0] == "T")

    def _after(_op=_op, **kw):
        return _op(**kw), _op(**kw).clone()

    def _operand(_op=_op, _first=_first, **kw):
        return _op(**kw), _op(**{**kw, _first: kw[_first].clone()})

    def _round_trip(_op=_op, _first=_first, **kw):
        return _op(**kw), _op(**{**kw, _first: kw[_first].to(torch.float64).to(torch.float32)})

    _gen(f"clone_after_{_name}", _after, _params(_spec), key=_key(_op))
    if _name in _AFTER_ONLY:
        continue
    _gen(f"clone_operand_of_{_name}", _operand, _params(_spec), key=_key(_op))
    _gen(f"float64_round_trip_operand_of_{_name}", _round_trip, _params(_spec, "float32"), key=_key(_op))


# ----------------------------------------------------------------------------------------------
# nn.MultiheadAttention's functional call (self-attention, packed in-projection, float key padding mask,
# eval mode, head-averaged weights): the query made contiguous first.
# q (L, N, E), packed in-projection (3E, E), out-projection (E, E), key padding mask (N, L) float.
# Example extents keep 3E = 3 * E in every trace of the rule compiler (6 -> 12 -> 18, 18 -> 36 -> 54).
_H = Scalar(kind="int", values=(2, 3, 1))


def _params(dt):
    return {"q": Tensor(shape=(3, 2, 6), dtype=dt), "w_in": Tensor(shape=(18, 6), dtype=dt),
            "b_in": Tensor(shape=(18,), dtype=dt), "w_o": Tensor(shape=(6, 6), dtype=dt),
            "b_o": Tensor(shape=(6,), dtype=dt), "m": Tensor(shape=(2, 3), dtype=dt), "h": _H}


def _mha(q, h, w_in, b_in, w_o, b_o, m):
    return F.multi_head_attention_forward(
        q, q, q, q.shape[-1], h, w_in, b_in, None, None, False, 0.0, w_o, b_o, training=False,
        key_padding_mask=m, need_weights=True, attn_mask=None, average_attn_weights=True, is_causal=False)


for _dt in ("float32", "float64"):
    for _i, _what in ((0, "output"), (1, "weights")):
        def _contig(q, w_in, b_in, w_o, b_o, m, h, _i=_i):
            qc = q.contiguous()
            return _mha(q, h, w_in, b_in, w_o, b_o, m)[_i], _mha(qc, h, w_in, b_in, w_o, b_o, m)[_i]

        make_rule(f"mha_self_attention_{_what}_of_contiguous_query_{_dt}", _contig, _params(_dt),
                  family="stress", numerics="approximate", source_text=f"mha_contig|{_what}|{_dt}|v1",
                  tags=("example-multiples",),
                  doc="the query (a transposed batch-first input) made contiguous first")

"""Decompositions of composite ops (softmax, norms, attention, linear/conv, losses, pooling, activations) into primitive ops, both ways where it makes sense."""
import math

import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, make_rule, rule
from eqsat_test.rules._decompose import DIM, EPS, F32_64, FAM, T, per_dtype  # noqa: F401

# ---- softmax family ------------------------------------------------------------------------------


@rule(family=FAM, numerics="approximate", bidirectional=True)
def softmax_dim_kw_is_stable_exp(x: Tensor(dtype=FLOATING), d: DIM):
    e = (x - x.amax(d, keepdim=True)).exp()
    return F.softmax(x, dim=d), e / e.sum(d, keepdim=True)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_softmax_dim_kw_is_functional(x: Tensor(dtype=FLOATING), d: DIM):
    return torch.softmax(x, dim=d), F.softmax(x, dim=d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def method_softmax_dim_kw_is_functional(x: Tensor(dtype=FLOATING), d: DIM):
    return x.softmax(dim=d), F.softmax(x, dim=d)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def log_softmax_dim_kw_is_stable_form(x: Tensor(dtype=FLOATING), d: DIM):
    s = x - x.amax(d, keepdim=True)
    return F.log_softmax(x, dim=d), s - s.exp().sum(d, keepdim=True).log()


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_log_softmax_dim_kw_is_functional(x: Tensor(dtype=FLOATING), d: DIM):
    return torch.log_softmax(x, dim=d), F.log_softmax(x, dim=d)


@rule(family=FAM, numerics="exact", bidirectional=True)
def softmin_is_softmax_of_neg(x: Tensor(dtype=FLOATING), d: DIM):
    return F.softmin(x, dim=d), F.softmax(-x, dim=d)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def logsumexp_is_stable_form(x: Tensor(rank=(1, 2, 3), dtype=FLOATING),
                             d: Scalar(kind="int", values=(0, -1))):
    m = x.amax(d, keepdim=True)
    return torch.logsumexp(x, d), (m + (x - m).exp().sum(d, keepdim=True).log()).squeeze(d)


# ---- normalization -------------------------------------------------------------------------------


def _moments(x, dims):
    v, m = torch.var_mean(x, dims, keepdim=True, correction=0)
    return m, v


def _normalized(x, m, v, eps):
    return (x - m) * torch.rsqrt(v + eps)


for _shape in ((3, 4), (2, 3, 4)):
    _r = len(_shape)

    def _ln(x, w, b, eps):
        m, v = _moments(x, -1)
        return F.layer_norm(x, x.shape[-1:], w, b, eps), _normalized(x, m, v, eps) * w + b

    # (float64 only: in float32 a row of nearly equal values makes any two algorithms differ
    # by more than `rules check` allows for float32; the affine split below covers float32)
    per_dtype(f"layer_norm_is_moments_rank{_r}", _ln,
              {"x": T(*_shape), "w": T(_shape[-1]), "b": T(_shape[-1]), "eps": EPS}, dtypes=("float64",))

    def _ln_split(x, w, b, eps):
        return (F.layer_norm(x, x.shape[-1:], w, b, eps),
                F.layer_norm(x, x.shape[-1:], None, None, eps) * w + b)

    per_dtype(f"layer_norm_is_plain_then_affine_rank{_r}", _ln_split,
              {"x": T(*_shape), "w": T(_shape[-1]), "b": T(_shape[-1]), "eps": EPS}, bidirectional=False,
              dtypes=FLOATING,
              doc="one way: layer_norm checks w and b's shapes, the affine map broadcasts them")

    def _ln_plain(x, eps):
        m, v = _moments(x, -1)
        return F.layer_norm(x, x.shape[-1:], None, None, eps), _normalized(x, m, v, eps)

    make_rule(f"layer_norm_no_affine_is_moments_rank{_r}", _ln_plain,
              {"x": Tensor(shape=_shape, dtype="float64"), "eps": EPS}, family=FAM,
              numerics="approximate", bidirectional=True,
              source_text=f"layer_norm_no_affine|{_shape}|v1")

    def _rms(x, w, eps):
        return (torch.rms_norm(x, x.shape[-1:], w, eps),
                x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w)

    per_dtype(f"rms_norm_is_rsqrt_mean_square_rank{_r}", _rms,
              {"x": T(*_shape), "w": T(_shape[-1]), "eps": EPS}, numerics="exact",
              doc="torch's own algorithm on CPU: bitwise equal")


def _gn4(x, g, w, b, eps):
    """torch's CPU kernel folds the affine map per channel: x * s + (b - mean * s)."""
    y = x.unflatten(1, (g, -1))
    m, v = _moments(y, (2, 3, 4))
    s = torch.rsqrt(v + eps) * w.unflatten(0, (g, -1))[:, :, None, None]
    return (F.group_norm(x, g, w, b, eps),
            (y * s + (b.unflatten(0, (g, -1))[:, :, None, None] - m * s)).flatten(1, 2))


def _gn3(x, g, w, b, eps):
    y = x.unflatten(1, (g, -1))
    m, v = _moments(y, (2, 3))
    s = torch.rsqrt(v + eps) * w.unflatten(0, (g, -1))[:, :, None]
    return (F.group_norm(x, g, w, b, eps),
            (y * s + (b.unflatten(0, (g, -1))[:, :, None] - m * s)).flatten(1, 2))


GROUPS = Scalar(kind="int", values=(2, 1))
per_dtype("group_norm_is_group_moments_rank4", _gn4,
          {"x": T(2, 4, 3, 5), "g": GROUPS, "w": T(4), "b": T(4), "eps": EPS}, bidirectional=False,
          dtypes=("float64",))
per_dtype("group_norm_is_group_moments_rank3", _gn3,
          {"x": T(2, 4, 5), "g": GROUPS, "w": T(4), "b": T(4), "eps": EPS}, bidirectional=False,
          dtypes=("float64",))


def _gn4_split(x, g, w, b, eps):
    return F.group_norm(x, g, w, b, eps), F.group_norm(x, g, None, None, eps) * w[:, None, None] + b[:, None, None]


def _gn3_split(x, g, w, b, eps):
    return F.group_norm(x, g, w, b, eps), F.group_norm(x, g, None, None, eps) * w[:, None] + b[:, None]


# (float64 only: torch folds the affine map into the normalization, and in float32 a group of
# nearly equal values puts the two further apart than `rules check` allows for float32)
per_dtype("group_norm_is_plain_then_affine_rank4", _gn4_split,
          {"x": T(2, 4, 3, 5, min_size=2), "g": GROUPS, "w": T(4), "b": T(4), "eps": EPS},
          bidirectional=False, dtypes=("float64",))
per_dtype("group_norm_is_plain_then_affine_rank3", _gn3_split,
          {"x": T(2, 4, 5, min_size=2), "g": GROUPS, "w": T(4), "b": T(4), "eps": EPS},
          bidirectional=False, dtypes=("float64",))


@rule(family=FAM, numerics="approximate")
def group_norm_no_affine_is_group_moments(x: Tensor(shape=(2, 4, 3, 5), dtype="float64"), g: GROUPS):
    y = x.unflatten(1, (g, -1))
    m, v = _moments(y, (2, 3, 4))
    return F.group_norm(x, g), _normalized(y, m, v, 1e-05).flatten(1, 2)


def _bn_view(t, rank):
    return t[(slice(None),) + (None,) * (rank - 2)]


for _shape in ((3, 4), (2, 4, 5), (2, 4, 3, 5), (2, 4, 3, 5, 2)):
    _r = len(_shape)

    def _bn(x, rm, rv, w, b, eps, _r=_r):
        y = (x - _bn_view(rm, _r)) * torch.rsqrt(_bn_view(rv, _r) + eps)
        return (F.batch_norm(x, rm, rv, w, b, False, 0.1, eps),
                y * _bn_view(w, _r) + _bn_view(b, _r))

    per_dtype(f"batch_norm_eval_is_affine_rank{_r}", _bn,
              {"x": T(*_shape), "rm": T(4), "rv": T(4), "w": T(4), "b": T(4), "eps": EPS},
              bidirectional=False, doc="eval-mode batch norm: the running statistics as an affine "
              "map (one way: batch_norm checks the statistics' shapes, the affine form broadcasts)")


def _bn_folded(x, rm, rv, w, b, eps):
    scale = w * torch.rsqrt(rv + eps)
    return (F.batch_norm(x, rm, rv, w, b, False, 0.1, eps),
            x * scale[:, None, None] + (b - rm * scale)[:, None, None])


per_dtype("batch_norm_eval_is_folded_scale_shift", _bn_folded,
          {"x": T(2, 4, 3, 5), "rm": T(4), "rv": T(4), "w": T(4), "b": T(4), "eps": EPS},
          bidirectional=False)


def _conv_bn(x, cw, rm, rv, w, b, eps):
    """conv then eval batch norm is one conv with scaled weights and a bias (conv-bn folding)."""
    scale = w * torch.rsqrt(rv + eps)
    return (F.batch_norm(torch.conv2d(x, cw, None, (1, 1), (1, 1), (1, 1), 1), rm, rv, w, b, False, 0.1, eps),
            torch.conv2d(x, cw * scale[:, None, None, None], b - rm * scale, (1, 1), (1, 1), (1, 1), 1))


per_dtype("conv_bn_eval_is_folded_conv", _conv_bn,
          {"x": T(2, 3, 5, 5), "cw": T(4, 3, 3, 3), "rm": T(4), "rv": T(4), "w": T(4), "b": T(4),
           "eps": EPS}, dtypes=("float32",), bidirectional=False)


def _instance_norm(x, w, b, eps):
    m, v = _moments(x, (2, 3))
    return (F.instance_norm(x, None, None, w, b, True, 0.1, eps),
            _normalized(x, m, v, eps) * w[:, None, None] + b[:, None, None])


per_dtype("instance_norm_is_moments", _instance_norm,
          {"x": T(2, 4, 3, 5), "w": T(4), "b": T(4), "eps": EPS}, bidirectional=False)


@rule(family=FAM, numerics="exact", bidirectional=True)
def local_response_norm_size5_is_avg_pool(x: Tensor(shape=(2, 4, 3, 5), dtype=("float32", "float64")),
                                          alpha: Scalar(kind="float", values=(1e-4, 0.5)),
                                          beta: Scalar(kind="float", values=(0.75, 0.5)),
                                          k: Scalar(kind="float", values=(2.0, 1.0))):
    """torch's own algorithm for 4-d inputs (a window of 5 channels)."""
    div = (x * x).view(x.shape[0], 1, x.shape[1], x.shape[2], -1)
    div = F.pad(div, (0, 0, 0, 0, 2, 2))
    div = F.avg_pool3d(div, (5, 1, 1), stride=1).squeeze(1).view(x.shape[0], x.shape[1], x.shape[2], x.shape[3])
    return F.local_response_norm(x, 5, alpha, beta, k), x / (div * alpha + k).pow(beta)


# ---- activations ---------------------------------------------------------------------------------


@rule(family=FAM, numerics="approximate", bidirectional=True)
def gelu_is_erf_over_sqrt2(x: Tensor(dtype=FLOATING)):
    return F.gelu(x), 0.5 * x * (1.0 + torch.erf(x / 1.4142135623730951))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def gelu_tanh_is_sigmoid_form(x: Tensor(dtype=("float32", "float64"))):
    return (F.gelu(x, approximate="tanh"),
            x * torch.sigmoid(1.5957691216057308 * (x + 0.044715 * x * x * x)))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def silu_is_x_over_one_plus_exp(x: Tensor(dtype=FLOATING)):
    return F.silu(x), x / (1 + torch.exp(-x))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def mish_is_tanh_log1p_exp(x: Tensor(dtype=("float32", "float64"))):
    return F.mish(x), x * torch.tanh(torch.log1p(torch.exp(x)))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def hardswish_is_relu6_form(x: Tensor(dtype=FLOATING)):
    return F.hardswish(x), x * F.relu6(x + 3) / 6


@rule(family=FAM, numerics="approximate", bidirectional=True)
def hardsigmoid_is_relu6_form(x: Tensor(dtype=FLOATING)):
    return F.hardsigmoid(x), F.relu6(x + 3) / 6


@rule(family=FAM, numerics="approximate", bidirectional=True)
def softplus_is_thresholded_log1p_exp(x: Tensor(dtype=("float32", "float64"))):
    return F.softplus(x), torch.where(x > 20, x, torch.log1p(torch.exp(x)))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def logsigmoid_is_neg_softplus_neg(x: Tensor(dtype=("float32", "float64"))):
    return F.logsigmoid(x), -F.softplus(-x)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def selu_is_scaled_elu_form(x: Tensor(dtype=("float32", "float64"))):
    return F.selu(x), 1.0507009873554805 * torch.where(x > 0, x, 1.6732632423543772 * torch.expm1(x))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def celu_is_where_expm1(x: Tensor(dtype=("float32", "float64"))):
    return F.celu(x), torch.where(x > 0, x, torch.expm1(x))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def elu_is_where_exp_minus_one(x: Tensor(dtype=("float32", "float64"))):
    return F.elu(x), torch.where(x > 0, x, torch.exp(x) - 1)


@rule(family=FAM, numerics="approximate")
def glu_is_half_times_sigmoid(x: Tensor(shape=(3, 4), dtype=FLOATING)):
    """One way: for an odd extent glu raises, while the two chunks may still broadcast."""
    a, b = x.chunk(2, -1)
    return F.glu(x, -1), a * torch.sigmoid(b)


@rule(family=FAM, numerics="exact", bidirectional=True)
def leaky_relu_slope_is_where(x: Tensor(dtype=("float32", "float64")),
                              s: Scalar(kind="float", values=(0.2, 0.1, 0.02))):
    return F.leaky_relu(x, s), torch.where(x > 0, x, x * s)


@rule(family=FAM, numerics="exact", bidirectional=True)
def hardtanh_bounds_is_clamp(x: Tensor(dtype=FLOATING), lo: Scalar(kind="float", values=(0.0, -2.0)),
                             hi: Scalar(kind="float", values=(6.0, 1.0))):
    return F.hardtanh(x, lo, hi), torch.clamp(x, lo, hi)


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def threshold_is_where(x: Tensor(dtype=FLOATING), t: Scalar(kind="float", values=(0.5, -1.0)),
                       v: Scalar(kind="float", values=(0.0, 2.0))):
    """threshold keeps NaN (NaN > t is false, so where picks the value)."""
    return F.threshold(x, t, v), torch.where(x > t, x, v)


# ---- attention -----------------------------------------------------------------------------------

_Q, _KV = (2, 3, 4, 5), (2, 3, 7, 5)  # (batch, heads, length, head dim); distinct extents


def _scores(q, k):
    return q @ k.transpose(-2, -1) * (1 / math.sqrt(q.shape[-1]))


def _sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v), torch.softmax(_scores(q, k), dim=-1) @ v


def _sdpa_causal(q, k, v):
    keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
    s = _scores(q, k).masked_fill(~keep, float("-inf"))
    return F.scaled_dot_product_attention(q, k, v, is_causal=True), torch.softmax(s, dim=-1) @ v


def _sdpa_scale(q, k, v, s):
    return (F.scaled_dot_product_attention(q, k, v, scale=s),
            torch.softmax(q @ k.transpose(-2, -1) * s, dim=-1) @ v)


def _sdpa_mask(q, k, v, m):
    return (F.scaled_dot_product_attention(q, k, v, attn_mask=m),
            torch.softmax(_scores(q, k) + m, dim=-1) @ v)


per_dtype("sdpa_is_softmax_attention", _sdpa, {"q": T(*_Q), "k": T(*_KV), "v": T(*_KV)})
per_dtype("sdpa_causal_is_masked_softmax_attention", _sdpa_causal, {"q": T(*_Q), "k": T(*_KV), "v": T(*_KV)},
          bidirectional=False)
per_dtype("sdpa_scale_is_softmax_attention", _sdpa_scale,
          {"q": T(*_Q), "k": T(*_KV), "v": T(*_KV), "s": Scalar(kind="float", values=(0.125, 0.5))})
per_dtype("sdpa_additive_mask_is_softmax_attention", _sdpa_mask,
          {"q": T(*_Q), "k": T(*_KV), "v": T(*_KV), "m": T(4, 7)})


# ---- linear, matmul forms, convolutions --------------------------------------------------------


def _linear3(x, w, b):
    return F.linear(x, w, b), x @ w.t() + b


def _linear_split(x, w, b):
    return F.linear(x, w, b), F.linear(x, w) + b


# (one way: F.linear checks its operands' shapes, the decompositions broadcast)
per_dtype("linear_rank3_is_matmul_add", _linear3, {"x": T(2, 3, 4), "w": T(5, 4), "b": T(5)},
          bidirectional=False)
per_dtype("linear_rank3_is_linear_plus_bias", _linear_split, {"x": T(2, 3, 4), "w": T(5, 4), "b": T(5)},
          bidirectional=False)
per_dtype("linear_rank2_is_linear_plus_bias", _linear_split, {"x": T(3, 4), "w": T(5, 4), "b": T(5)},
          bidirectional=False)


@rule(family=FAM, numerics="approximate")
def linear_no_bias_is_einsum(x: Tensor(shape=(2, 3, 4), dtype=("float32", "float64")),
                             w: Tensor(shape=(5, 4), dtype=("float32", "float64"))):
    return F.linear(x, w), torch.einsum("bti,oi->bto", x, w)


STRIDE = Scalar(kind="int", values=(1, 2))
PAD = Scalar(kind="int", values=(0, 1))


def _conv2d_bias(x, w, b, s, p):
    return (torch.conv2d(x, w, b, (s, s), (p, p), (1, 1), 1),
            torch.conv2d(x, w, None, (s, s), (p, p), (1, 1), 1) + b[:, None, None])


def _conv1d_bias(x, w, b, s, p):
    return (torch.conv1d(x, w, b, (s,), (p,), (1,), 1),
            torch.conv1d(x, w, None, (s,), (p,), (1,), 1) + b[:, None])


def _conv3d_bias(x, w, b, s, p):
    return (torch.conv3d(x, w, b, (s, s, s), (p, p, p), (1, 1, 1), 1),
            torch.conv3d(x, w, None, (s, s, s), (p, p, p), (1, 1, 1), 1) + b[:, None, None, None])


def _conv1d_as_2d(x, w, s, p):
    return (torch.conv1d(x, w, None, (s,), (p,), (1,), 1),
            torch.conv2d(x.unsqueeze(2), w.unsqueeze(2), None, (1, s), (0, p), (1, 1), 1).squeeze(2))


def _conv_transpose2d_bias(x, w, b, s, p):
    return (torch.conv_transpose2d(x, w, b, (s, s), (p, p), (0, 0), 1, (1, 1)),
            torch.conv_transpose2d(x, w, None, (s, s), (p, p), (0, 0), 1, (1, 1)) + b[:, None, None])


per_dtype("conv2d_bias_is_conv2d_plus_bias", _conv2d_bias,
          {"x": T(2, 3, 5, 5), "w": T(4, 3, 3, 3), "b": T(4), "s": STRIDE, "p": PAD}, bidirectional=False)
per_dtype("conv1d_bias_is_conv1d_plus_bias", _conv1d_bias,
          {"x": T(2, 3, 5), "w": T(4, 3, 3), "b": T(4), "s": STRIDE, "p": PAD}, bidirectional=False)
per_dtype("conv3d_bias_is_conv3d_plus_bias", _conv3d_bias,
          {"x": T(2, 3, 5, 5, 5), "w": T(4, 3, 3, 3, 3), "b": T(4), "s": STRIDE, "p": PAD},
          dtypes=("float32",), bidirectional=False)
per_dtype("conv1d_is_conv2d_of_unsqueezed", _conv1d_as_2d,
          {"x": T(2, 3, 5), "w": T(4, 3, 3), "s": STRIDE, "p": PAD}, numerics="exact", bidirectional=False)
per_dtype("conv_transpose2d_bias_is_plus_bias", _conv_transpose2d_bias,
          {"x": T(2, 3, 5, 5), "w": T(3, 4, 3, 3), "b": T(4), "s": STRIDE, "p": PAD},
          dtypes=("float32",), bidirectional=False)

# ---- pooling and resampling ----------------------------------------------------------------------


@rule(family=FAM, numerics="exact", bidirectional=True)
def adaptive_avg_pool2d_1_is_mean(x: Tensor(rank=4, dtype=FLOATING)):
    return F.adaptive_avg_pool2d(x, 1), x.mean((-2, -1), keepdim=True)


@rule(family=FAM, numerics="exact", bidirectional=True)
def adaptive_avg_pool1d_1_is_mean(x: Tensor(rank=3, dtype=FLOATING)):
    return F.adaptive_avg_pool1d(x, 1), x.mean(-1, keepdim=True)


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def adaptive_max_pool2d_1_is_amax(x: Tensor(rank=4, dtype=FLOATING)):
    return F.adaptive_max_pool2d(x, 1), x.amax((-2, -1), keepdim=True)


@rule(family=FAM, numerics="exact", bidirectional=True)
def adaptive_max_pool1d_1_is_amax(x: Tensor(rank=3, dtype=FLOATING)):
    return F.adaptive_max_pool1d(x, 1), x.amax(-1, keepdim=True)


def _windows2(x):
    """x's 2x2 windows: (N, C, H/2, 2, W/2, 2), odd trailing rows/columns dropped."""
    x = x.narrow(-2, 0, x.shape[-2] - x.shape[-2] % 2).narrow(-1, 0, x.shape[-1] - x.shape[-1] % 2)
    return x.unflatten(-1, (-1, 2)).unflatten(-3, (-1, 2))


@rule(family=FAM, numerics="ieee-edge")
def max_pool2d_2_is_window_amax(x: Tensor(shape=(2, 3, 4, 5), dtype=("float32", "float64"))):
    return F.max_pool2d(x, 2), _windows2(x).amax((3, 5))


@rule(family=FAM, numerics="approximate")
def avg_pool2d_2_is_window_mean(x: Tensor(shape=(2, 3, 4, 5), dtype=("float32", "float64"))):
    return F.avg_pool2d(x, 2), _windows2(x).mean((3, 5))


KERNEL = Scalar(kind="int", values=(2, 3))


@rule(family="spelling", numerics="exact", bidirectional=True)
def max_pool2d_stride_keyword(x: Tensor(rank=4, dtype=FLOATING, min_size=3), k: KERNEL):
    return F.max_pool2d(x, k, stride=k), F.max_pool2d(x, k)


@rule(family="spelling", numerics="exact", bidirectional=True)
def max_pool2d_module_call_form(x: Tensor(rank=4, dtype=FLOATING, min_size=3), k: KERNEL):
    """nn.MaxPool2d(k) calls max_pool2d with every argument."""
    return F.max_pool2d(x, k, k, 0, 1, ceil_mode=False, return_indices=False), F.max_pool2d(x, k)


@rule(family="spelling", numerics="exact", bidirectional=True)
def max_pool2d_padded_module_call_form(x: Tensor(rank=4, dtype=FLOATING, min_size=3),
                                       k: Scalar(kind="int", values=(3, 2)),
                                       s: Scalar(kind="int", values=(2, 1)),
                                       p: Scalar(kind="int", values=(1, 0))):
    return (F.max_pool2d(x, k, s, p, 1, ceil_mode=False, return_indices=False),
            F.max_pool2d(x, kernel_size=k, stride=s, padding=p))


@rule(family="spelling", numerics="exact", bidirectional=True)
def avg_pool2d_stride_keyword(x: Tensor(rank=4, dtype=FLOATING, min_size=3), k: KERNEL):
    return F.avg_pool2d(x, k, stride=k), F.avg_pool2d(x, k)


@rule(family="spelling", numerics="exact", bidirectional=True)
def avg_pool3d_keywords(x: Tensor(rank=5, dtype=FLOATING, min_size=3), k: KERNEL):
    return F.avg_pool3d(x, kernel_size=k, stride=k), F.avg_pool3d(x, k)


@rule(family="spelling", numerics="exact", bidirectional=True)
def max_pool3d_module_call_form(x: Tensor(rank=5, dtype=FLOATING, min_size=3), k: KERNEL):
    return F.max_pool3d(x, k, k, 0, 1, ceil_mode=False, return_indices=False), F.max_pool3d(x, k)


@rule(family=FAM, numerics="exact", bidirectional=True)
def interpolate_nearest_double_is_repeat_interleave(x: Tensor(rank=4, dtype=FLOATING)):
    return (F.interpolate(x, size=(2 * x.shape[-2], 2 * x.shape[-1]), mode="nearest"),
            x.repeat_interleave(2, -1).repeat_interleave(2, -2))


@rule(family="spelling", numerics="exact", bidirectional=True)
def interpolate_scale2_is_size_bilinear(x: Tensor(rank=4, dtype=("float32", "float64"))):
    return (F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
            F.interpolate(x, size=(2 * x.shape[-2], 2 * x.shape[-1]), mode="bilinear", align_corners=False))


@rule(family="spelling", numerics="exact", bidirectional=True)
def interpolate_scale2_is_size_nearest(x: Tensor(rank=4, dtype=FLOATING)):
    return (F.interpolate(x, scale_factor=2, mode="nearest"),
            F.interpolate(x, size=(2 * x.shape[-2], 2 * x.shape[-1]), mode="nearest"))


# pointwise monotone ops commute with max pooling (max(f(a), f(b)) = f(max(a, b)))
# (sigmoid's vectorized kernel rounds differently from its scalar tail: approximate)
for _name, _f, _num in (("relu", F.relu, "ieee-edge"), ("sigmoid", torch.sigmoid, "approximate"),
                        ("tanh", torch.tanh, "exact"), ("hardtanh", lambda x: F.hardtanh(x, 0.0, 6.0), "ieee-edge")):
    def _mp(x, _f=_f):
        return F.max_pool2d(_f(x), 2), _f(F.max_pool2d(x, 2))

    make_rule(f"max_pool2d_through_{_name}", _mp, {"x": Tensor(rank=4, dtype=FLOATING)}, family=FAM,
              numerics=_num, bidirectional=True,
              doc=f"{_name} is monotone: it commutes with max pooling",
              source_text=f"max_pool2d_through|{_name}|{_num}|v2")


@rule(family=FAM, numerics="exact", bidirectional=True)
def repeat_interleave_heads_is_expand(x: Tensor(rank=4, dtype=FLOATING), k: Scalar(kind="int", values=(2, 3))):
    """grouped-query attention: each key/value head repeated k times."""
    return x.repeat_interleave(k, dim=1), x.unsqueeze(2).expand(-1, -1, k, -1, -1).flatten(1, 2)


@rule(family="spelling", numerics="exact", bidirectional=True)
def grid_sample_default_keywords(x: Tensor(rank=4, dtype=("float32", "float64")),
                                 g: Tensor(rank=4, dtype=("float32", "float64"))):
    """(g's last extent must be 2: traced at fixed sizes, sampled where the shapes allow)"""
    return (F.grid_sample(x, g, mode="bilinear", padding_mode="zeros", align_corners=False),
            F.grid_sample(x, g, align_corners=False))

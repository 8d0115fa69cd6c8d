"""Activation rules: relu/clamp/where/maximum forms and sigmoid/tanh/softplus/silu/gelu/softmax identities."""
import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import FLOATING, INTEGRAL, NUMERIC, Scalar, Tensor, rule

# ---- relu and clamps ---------------------------------------------------------------------------

# Never 0-dim: a 0-dim operand of another dtype is rounded to the dimensioned operands' dtype in
# `torch.maximum(x, lo)` but not in `torch.clamp(x, lo, hi)` with a wider `hi` (see algebra.py).
DIMENSIONED = (1, 2, 3, 4)


@rule(family="activation", numerics="exact", bidirectional=True)
def relu_is_clamp_min0(x: Tensor(dtype=NUMERIC)):
    return torch.relu(x), torch.clamp(x, min=0)


@rule(family="activation", numerics="exact", bidirectional=True)
def relu_is_clamp_min_fn(x: Tensor(dtype=NUMERIC)):
    return torch.relu(x), torch.clamp_min(x, 0)


@rule(family="activation", numerics="ieee-edge", bidirectional=True)
def relu_is_maximum_zeros(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.maximum(x, torch.zeros_like(x))


@rule(family="activation", numerics="exact", bidirectional=True)
def relu_is_maximum_zeros_int(x: Tensor(dtype=INTEGRAL)):
    return torch.relu(x), torch.maximum(x, torch.zeros_like(x))


@rule(family="activation", numerics="ieee-edge", bidirectional=True)
def relu_is_where(x: Tensor(dtype=FLOATING)):
    """relu(NaN) is NaN, the where form gives 0."""
    return torch.relu(x), torch.where(x > 0, x, 0.0)


@rule(family="activation", numerics="ieee-edge", bidirectional=True)
def relu_is_mul_mask(x: Tensor(dtype=FLOATING)):
    """x * (x > 0) is -0.0 for negative x and NaN for -inf."""
    return torch.relu(x), x * (x > 0)


@rule(family="activation", numerics="exact")
def relu_difference_is_identity(x: Tensor(dtype=FLOATING)):
    return torch.relu(x) - torch.relu(-x), x


@rule(family="activation", numerics="exact", bidirectional=True)
def abs_is_relu_sum(x: Tensor(dtype=FLOATING)):
    """Bitwise even on zeros: relu keeps -0.0, and -0.0 + +0.0 is +0.0 = abs(-0.0)."""
    return torch.abs(x), torch.relu(x) + torch.relu(-x)


@rule(family="activation", numerics="ieee-edge", bidirectional=True)
def neg_relu_neg_is_clamp_max0(x: Tensor(dtype=FLOATING)):
    return -torch.relu(-x), torch.clamp(x, max=0)


@rule(family="activation", numerics="exact", bidirectional=True)
def relu6_is_clamp(x: Tensor(dtype=FLOATING)):
    return F.relu6(x), torch.clamp(x, 0, 6)


@rule(family="activation", numerics="exact", bidirectional=True)
def relu6_is_hardtanh(x: Tensor(dtype=FLOATING)):
    return F.relu6(x), F.hardtanh(x, 0.0, 6.0)


@rule(family="activation", numerics="exact", bidirectional=True)
def hardtanh_is_clamp(x: Tensor(dtype=FLOATING)):
    return F.hardtanh(x), torch.clamp(x, -1.0, 1.0)


@rule(family="activation", numerics="exact", bidirectional=True)
def clamp_is_clamp_min_then_max(x: Tensor(dtype=FLOATING)):
    return torch.clamp(x, -1.0, 1.0), torch.clamp(torch.clamp(x, min=-1.0), max=1.0)


@rule(family="activation", numerics="ieee-edge", bidirectional=True, same_shape=False)
def clamp_tensor_is_min_max(x: Tensor(rank=DIMENSIONED, dtype=FLOATING), lo: Tensor(rank=DIMENSIONED, dtype=FLOATING),
                            hi: Tensor(rank=DIMENSIONED, dtype=FLOATING)):
    return torch.clamp(x, lo, hi), torch.minimum(torch.maximum(x, lo), hi)


@rule(family="activation", numerics="exact", bidirectional=True)
def leaky_relu_is_where(x: Tensor(dtype=FLOATING)):
    return F.leaky_relu(x, 0.01), torch.where(x > 0, x, x * 0.01)


# ---- smooth activations (approximate) ---------------------------------------------------------


@rule(family="activation", numerics="approximate", bidirectional=True)
def silu_is_x_sigmoid(x: Tensor(dtype=FLOATING)):
    return F.silu(x), x * torch.sigmoid(x)


@rule(family="activation", numerics="approximate", bidirectional=True)
def sigmoid_is_exp_form(x: Tensor(dtype=FLOATING)):
    return torch.sigmoid(x), 1 / (1 + torch.exp(-x))


@rule(family="activation", numerics="approximate", bidirectional=True)
def sigmoid_of_neg(x: Tensor(dtype=FLOATING)):
    return torch.sigmoid(-x), 1 - torch.sigmoid(x)


@rule(family="activation", numerics="approximate", bidirectional=True)
def tanh_is_scaled_sigmoid(x: Tensor(dtype=FLOATING)):
    return torch.tanh(x), 2 * torch.sigmoid(2 * x) - 1


@rule(family="activation", numerics="approximate", bidirectional=True)
def softplus_is_log1p_exp(x: Tensor(dtype=FLOATING)):
    return F.softplus(x), torch.log1p(torch.exp(x))


@rule(family="activation", numerics="approximate", bidirectional=True)
def softplus_reflection(x: Tensor(dtype=FLOATING)):
    return F.softplus(x) - x, F.softplus(-x)


@rule(family="activation", numerics="approximate", bidirectional=True)
def gelu_is_erf_form(x: Tensor(dtype=FLOATING)):
    return F.gelu(x), x * 0.5 * (1.0 + torch.erf(x * 0.7071067811865476))


@rule(family="activation", numerics="approximate", bidirectional=True)
def gelu_tanh_is_formula(x: Tensor(dtype=FLOATING)):
    return (F.gelu(x, approximate="tanh"),
            0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))))


@rule(family="activation", numerics="approximate", bidirectional=True)
def hardsigmoid_is_clamp_form(x: Tensor(dtype=FLOATING)):
    return F.hardsigmoid(x), torch.clamp(x + 3.0, 0.0, 6.0) / 6.0


@rule(family="activation", numerics="approximate", bidirectional=True)
def hardswish_is_x_hardsigmoid(x: Tensor(dtype=FLOATING)):
    return F.hardswish(x), x * F.hardsigmoid(x)


@rule(family="activation", numerics="approximate", bidirectional=True)
def mish_is_x_tanh_softplus(x: Tensor(dtype=FLOATING)):
    return F.mish(x), x * torch.tanh(F.softplus(x))


@rule(family="activation", numerics="approximate", bidirectional=True)
def elu_is_where_expm1(x: Tensor(dtype=FLOATING)):
    return F.elu(x), torch.where(x > 0, x, torch.expm1(x))


# ---- softmax family ----------------------------------------------------------------------------


@rule(family="activation", numerics="approximate", bidirectional=True)
def softmax_is_normalized_exp(x: Tensor(dtype=FLOATING), d: Scalar(kind="int", values=(0, 1, -1))):
    return F.softmax(x, d), torch.exp(x) / torch.exp(x).sum(d, keepdim=True)


@rule(family="activation", numerics="approximate", bidirectional=True)
def softmax_is_stable_normalized_exp(x: Tensor(dtype=FLOATING),
                                     d: Scalar(kind="int", values=(0, 1, -1))):
    e = torch.exp(x - x.amax(d, keepdim=True))
    return F.softmax(x, d), e / e.sum(d, keepdim=True)


@rule(family="activation", numerics="approximate", bidirectional=True)
def softmax_is_exp_log_softmax(x: Tensor(dtype=FLOATING), d: Scalar(kind="int", values=(0, 1, -1))):
    return F.softmax(x, d), torch.exp(F.log_softmax(x, d))


@rule(family="activation", numerics="approximate", bidirectional=True)
def log_softmax_is_log_of_softmax(x: Tensor(dtype=("float32", "float64", "bfloat16")),
                                  d: Scalar(kind="int", values=(0, 1, -1))):
    """Not for float16: over a long dimension softmax underflows to 0 (log: -inf) where log_softmax
    is finite."""
    return F.log_softmax(x, d), torch.log(F.softmax(x, d))


@rule(family="activation", numerics="approximate", bidirectional=True)
def log_softmax_is_sub_logsumexp(x: Tensor(dtype=FLOATING),
                                 d: Scalar(kind="int", values=(0, 1, -1))):
    return F.log_softmax(x, d), x - torch.logsumexp(x, d, keepdim=True)

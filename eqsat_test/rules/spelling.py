"""Spelling rules: the same operation written as a Python operator, a torch function, a Tensor method or an alias."""
import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, BOOL, FLOATING, INTEGRAL, NUMERIC, Scalar, Tensor, rule

# ---- binary arithmetic: operator <-> torch.fn <-> Tensor.method ---------------------------------


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def add_op_is_torch_add(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x + y, torch.add(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def add_op_is_method(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x + y, x.add(y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def sub_op_is_torch_sub(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x - y, torch.sub(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def sub_op_is_method(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x - y, x.sub(y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def torch_sub_is_subtract(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return torch.sub(x, y), torch.subtract(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def mul_op_is_torch_mul(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x * y, torch.mul(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def mul_op_is_method(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x * y, x.mul(y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def torch_mul_is_multiply(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return torch.mul(x, y), torch.multiply(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True)
def mul_scalar_op_is_method(x: Tensor(dtype=FLOATING), s: Scalar(kind="float")):
    return x * s, x.mul(s)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def div_op_is_torch_div(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x / y, torch.div(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def div_op_is_method(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x / y, x.div(y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def torch_div_is_true_divide(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return torch.div(x, y), torch.true_divide(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def torch_div_is_divide(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return torch.div(x, y), torch.divide(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def floordiv_op_is_floor_divide(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x // y, torch.floor_divide(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def floordiv_op_is_div_floor(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x // y, torch.div(x, y, rounding_mode="floor")


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def div_trunc_method_is_function(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x.div(y, rounding_mode="trunc"), torch.div(x, y, rounding_mode="trunc")


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def mod_op_is_remainder(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return x % y, torch.remainder(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def pow_op_is_torch_pow(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x ** y, torch.pow(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_scalar_op_is_torch_pow(x: Tensor(dtype=FLOATING), s: Scalar(kind="float")):
    return x ** s, torch.pow(x, s)


@rule(family="spelling", numerics="exact", bidirectional=True)
def rsub_op_is_torch_rsub(x: Tensor(dtype=FLOATING), s: Scalar(kind="float")):
    return s - x, torch.rsub(x, s)


# ---- unary operators ----------------------------------------------------------------------------


@rule(family="spelling", numerics="exact", bidirectional=True)
def neg_op_is_torch_neg(x: Tensor(dtype=NUMERIC)):
    return -x, torch.neg(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def neg_op_is_method(x: Tensor(dtype=NUMERIC)):
    return -x, x.neg()


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_neg_is_negative(x: Tensor(dtype=NUMERIC)):
    return torch.neg(x), torch.negative(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def invert_op_is_bitwise_not(x: Tensor(dtype=INTEGRAL + BOOL)):
    return ~x, torch.bitwise_not(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def abs_builtin_is_torch_abs(x: Tensor(dtype=NUMERIC)):
    return abs(x), torch.abs(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_abs_is_method(x: Tensor(dtype=NUMERIC)):
    return torch.abs(x), x.abs()


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_abs_is_absolute(x: Tensor(dtype=NUMERIC)):
    return torch.abs(x), torch.absolute(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_exp_is_method(x: Tensor(dtype=FLOATING)):
    return torch.exp(x), x.exp()


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_log_is_method(x: Tensor(dtype=FLOATING)):
    return torch.log(x), x.log()


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_sqrt_is_method(x: Tensor(dtype=FLOATING)):
    return torch.sqrt(x), x.sqrt()


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_trunc_is_fix(x: Tensor(dtype=FLOATING)):
    return torch.trunc(x), torch.fix(x)


# ---- comparisons --------------------------------------------------------------------------------


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def gt_op_is_torch_gt(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x > y, torch.gt(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def gt_op_is_method(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x > y, x.gt(y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def torch_gt_is_greater(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return torch.gt(x, y), torch.greater(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def ge_op_is_torch_ge(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x >= y, torch.ge(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def lt_op_is_torch_lt(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x < y, torch.lt(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def le_op_is_torch_le(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x <= y, torch.le(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def eq_op_is_torch_eq(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x == y, torch.eq(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def ne_op_is_torch_ne(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x != y, torch.ne(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def maximum_is_binary_max(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return torch.maximum(x, y), torch.max(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True, same_shape=False)
def minimum_is_binary_min(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return torch.minimum(x, y), torch.min(x, y)


# ---- powers written as products or named functions ------------------------------------------


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_half_is_sqrt(x: Tensor(dtype=("float32", "float64", "bfloat16"))):
    """Bitwise equal in float32/float64/bfloat16; see pow_half_is_sqrt_fp16 for float16."""
    return x ** 0.5, torch.sqrt(x)


@rule(family="spelling", numerics="ieee-edge", bidirectional=True)
def pow_half_is_sqrt_fp16(x: Tensor(dtype="float16")):
    """float16 on CPU: (-0.0) ** 0.5 is +0.0 but sqrt(-0.0) is -0.0."""
    return x ** 0.5, torch.sqrt(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_neg_one_is_reciprocal(x: Tensor(dtype=FLOATING)):
    return x ** -1, torch.reciprocal(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_two_is_mul_self(x: Tensor(dtype=NUMERIC)):
    return x ** 2, x * x


@rule(family="spelling", numerics="exact", bidirectional=True)
def square_is_mul_self(x: Tensor(dtype=NUMERIC)):
    return torch.square(x), x * x


@rule(family="spelling", numerics="exact", bidirectional=True)
def square_is_pow_two(x: Tensor(dtype=NUMERIC)):
    return torch.square(x), x ** 2


# ---- activations and softmax: nn.functional <-> torch <-> method --------------------------------


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_relu_is_torch_relu(x: Tensor(dtype=NUMERIC)):
    return F.relu(x), torch.relu(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_relu_is_method(x: Tensor(dtype=NUMERIC)):
    return torch.relu(x), x.relu()


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_sigmoid_is_torch_sigmoid(x: Tensor(dtype=FLOATING)):
    return F.sigmoid(x), torch.sigmoid(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_sigmoid_is_method(x: Tensor(dtype=FLOATING)):
    return torch.sigmoid(x), x.sigmoid()


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_tanh_is_torch_tanh(x: Tensor(dtype=FLOATING)):
    return F.tanh(x), torch.tanh(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_tanh_is_method(x: Tensor(dtype=FLOATING)):
    return torch.tanh(x), x.tanh()


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_softmax_is_torch_softmax(x: Tensor(dtype=FLOATING),
                                        d: Scalar(kind="int", values=(0, 1, -1))):
    return F.softmax(x, d), torch.softmax(x, d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_softmax_is_method(x: Tensor(dtype=FLOATING), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.softmax(x, d), x.softmax(d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_softmax_dim_keyword(x: Tensor(dtype=FLOATING),
                                   d: Scalar(kind="int", values=(0, 1, -1))):
    return F.softmax(x, d), F.softmax(x, dim=d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_log_softmax_is_torch(x: Tensor(dtype=FLOATING),
                                    d: Scalar(kind="int", values=(0, 1, -1))):
    return F.log_softmax(x, d), torch.log_softmax(x, d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_clamp_is_clip(x: Tensor(dtype=FLOATING), lo: Scalar(kind="float", values=(-1.0, 0.0, 0.5))):
    return torch.clamp(x, min=lo), torch.clip(x, min=lo)


@rule(family="spelling", numerics="exact", bidirectional=True)
def clamp_min_keyword_is_clamp_min(x: Tensor(dtype=FLOATING),
                                   lo: Scalar(kind="float", values=(-1.0, 0.0, 0.5))):
    return x.clamp(min=lo), x.clamp_min(lo)


# ---- reductions: positional <-> keyword dim, function <-> method -------------------------------


@rule(family="spelling", numerics="exact", bidirectional=True)
def sum_dim_positional_is_keyword(x: Tensor(dtype=NUMERIC), d: Scalar(kind="int", values=(0, 1, -1))):
    return x.sum(d), x.sum(dim=d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_sum_is_method(x: Tensor(dtype=NUMERIC), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.sum(x, d), x.sum(d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_mean_is_method(x: Tensor(dtype=FLOATING), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.mean(x, d), x.mean(d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_amax_is_method(x: Tensor(dtype=NUMERIC), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.amax(x, d), x.amax(d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_prod_is_method(x: Tensor(dtype=NUMERIC), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.prod(x, d), x.prod(d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def torch_argmax_is_method(x: Tensor(dtype=NUMERIC), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.argmax(x, d), x.argmax(d)

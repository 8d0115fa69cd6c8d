"""Miscellaneous rules: zeros/ones/full_like, exp/log variants (expm1, log1p, log2, exp2, rsqrt, inverse hyperbolic functions), lerp/addcmul/addcdiv, alpha arguments."""
import torch

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, FLOATING, Tensor, rule


@rule(family="misc", numerics="exact", bidirectional=True)
def zeros_like_is_full_like(x: Tensor(dtype=ANY_DTYPE)):
    return torch.zeros_like(x), torch.full_like(x, 0)


@rule(family="misc", numerics="exact", bidirectional=True)
def ones_like_is_full_like(x: Tensor(dtype=ANY_DTYPE)):
    return torch.ones_like(x), torch.full_like(x, 1)


@rule(family="misc", numerics="approximate", bidirectional=True)
def expm1_is_exp_minus_one(x: Tensor(dtype=FLOATING)):
    return torch.expm1(x), torch.exp(x) - 1


@rule(family="misc", numerics="approximate", bidirectional=True)
def log1p_is_log_of_one_plus(x: Tensor(dtype=FLOATING)):
    return torch.log1p(x), torch.log(1 + x)


@rule(family="misc", numerics="approximate")
def acosh_is_log_form(x: Tensor(dtype=("float32", "float64"))):
    # the textbook form squares x: it overflows where acosh does not (ledger #9 is this, inside Inductor)
    return torch.acosh(x), torch.log(x + torch.sqrt(x * x - 1))


@rule(family="misc", numerics="approximate")
def asinh_is_log_form(x: Tensor(dtype=("float32", "float64"))):
    return torch.asinh(x), torch.sign(x) * torch.log(x.abs() + torch.sqrt(x * x + 1))


@rule(family="misc", numerics="approximate")
def atanh_is_half_log1p_difference(x: Tensor(dtype=("float32", "float64"))):
    # keeps the precision near 0 that 0.5 * log((1 + x) / (1 - x)) loses (ledger #10)
    return torch.atanh(x), 0.5 * (torch.log1p(x) - torch.log1p(-x))


@rule(family="misc", numerics="approximate", bidirectional=True)
def log2_is_scaled_log(x: Tensor(dtype=FLOATING)):
    return torch.log2(x), torch.log(x) * 1.4426950408889634


@rule(family="misc", numerics="approximate", bidirectional=True)
def log10_is_scaled_log(x: Tensor(dtype=FLOATING)):
    return torch.log10(x), torch.log(x) * 0.4342944819032518


@rule(family="misc", numerics="approximate", bidirectional=True)
def exp2_is_two_pow(x: Tensor(dtype=FLOATING)):
    return torch.exp2(x), 2.0 ** x


@rule(family="misc", numerics="approximate", bidirectional=True)
def rsqrt_is_reciprocal_sqrt(x: Tensor(dtype=FLOATING)):
    return torch.rsqrt(x), 1 / torch.sqrt(x)


@rule(family="misc", numerics="approximate", bidirectional=True)
def pow_neg_half_is_rsqrt(x: Tensor(dtype=FLOATING)):
    return x ** -0.5, torch.rsqrt(x)


@rule(family="misc", numerics="approximate", same_shape=False)
def lerp_half_is_midpoint(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """One way only: lerp wants equal dtypes, the arithmetic form promotes."""
    return torch.lerp(x, y, 0.5), x + 0.5 * (y - x)


@rule(family="misc", numerics="approximate", bidirectional=True, same_shape=False)
def addcmul_is_add_mul(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING), z: Tensor(dtype=FLOATING)):
    return torch.addcmul(x, y, z), x + y * z


@rule(family="misc", numerics="approximate", bidirectional=True, same_shape=False)
def addcdiv_is_add_div(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING), z: Tensor(dtype=FLOATING)):
    return torch.addcdiv(x, y, z), x + y / z


@rule(family="misc", numerics="approximate", bidirectional=True, same_shape=False)
def add_alpha_is_add_scaled(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return torch.add(x, y, alpha=2), x + y * 2


@rule(family="misc", numerics="approximate", bidirectional=True, same_shape=False)
def sub_alpha_is_sub_scaled(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return torch.sub(x, y, alpha=3), x - y * 3


@rule(family="misc", numerics="approximate", bidirectional=True)
def sin_squared_plus_cos_squared(x: Tensor(dtype=FLOATING)):
    return torch.sin(x) * torch.sin(x) + torch.cos(x) * torch.cos(x), torch.ones_like(x)


@rule(family="misc", numerics="ieee-edge", bidirectional=True)
def floor_is_floor_divide_one(x: Tensor(dtype=FLOATING)):
    return torch.floor(x), x // 1


@rule(family="misc", numerics="exact", bidirectional=True)
def round_is_method(x: Tensor(dtype=FLOATING)):
    return torch.round(x), x.round()


@rule(family="misc", numerics="exact", bidirectional=True)
def frac_is_sub_trunc(x: Tensor(dtype=FLOATING)):
    return torch.frac(x), x - torch.trunc(x)

"""Neutral-element rules: adding zero, multiplying by one, absorbing zeros, self-cancellation and idempotence, in scalar and tensor forms."""
import torch

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, BOOL, FLOATING, INTEGRAL, NUMERIC, Tensor, rule


@rule(family="neutral", numerics="ieee-edge")
def add_zero(x: Tensor(dtype=FLOATING)):
    """-0.0 + 0 is +0.0."""
    return x + 0, x


@rule(family="neutral", numerics="exact")
def add_zero_int(x: Tensor(dtype=INTEGRAL)):
    return x + 0, x


@rule(family="neutral", numerics="ieee-edge")
def zero_add(x: Tensor(dtype=FLOATING)):
    return 0 + x, x


@rule(family="neutral", numerics="exact")
def sub_zero(x: Tensor(dtype=NUMERIC)):
    """x - 0 keeps -0.0 (-0.0 - 0.0 is -0.0), so this one is exact even in floating point."""
    return x - 0, x


@rule(family="neutral", numerics="exact")
def mul_one(x: Tensor(dtype=NUMERIC)):
    return x * 1, x


@rule(family="neutral", numerics="exact")
def one_mul(x: Tensor(dtype=NUMERIC)):
    return 1 * x, x


@rule(family="neutral", numerics="exact")
def mul_one_float(x: Tensor(dtype=FLOATING)):
    return x * 1.0, x


@rule(family="neutral", numerics="exact")
def div_one(x: Tensor(dtype=FLOATING)):
    return x / 1, x


@rule(family="neutral", numerics="exact")
def div_one_float(x: Tensor(dtype=FLOATING)):
    return x / 1.0, x


@rule(family="neutral", numerics="exact")
def pow_one(x: Tensor(dtype=NUMERIC)):
    return x ** 1, x


@rule(family="neutral", numerics="exact")
def pow_zero_is_ones(x: Tensor(dtype=FLOATING)):
    """IEEE pow: x ** 0 is 1 for every x, NaN included."""
    return x ** 0, torch.ones_like(x)


@rule(family="neutral", numerics="ieee-edge")
def add_zeros_like(x: Tensor(dtype=FLOATING)):
    return x + torch.zeros_like(x), x


@rule(family="neutral", numerics="exact")
def add_zeros_like_int(x: Tensor(dtype=INTEGRAL + BOOL)):
    return x + torch.zeros_like(x), x


@rule(family="neutral", numerics="exact")
def mul_ones_like(x: Tensor(dtype=ANY_DTYPE)):
    return x * torch.ones_like(x), x


@rule(family="neutral", numerics="ieee-edge", bidirectional=True)
def mul_zero_is_zeros_like(x: Tensor(dtype=FLOATING)):
    """x * 0 is NaN for inf/NaN and -0.0 for negative x."""
    return x * 0, torch.zeros_like(x)


@rule(family="neutral", numerics="exact", bidirectional=True)
def mul_zero_is_zeros_like_int(x: Tensor(dtype=INTEGRAL)):
    return x * 0, torch.zeros_like(x)


@rule(family="neutral", numerics="ieee-edge", bidirectional=True)
def sub_self_is_zeros_like(x: Tensor(dtype=FLOATING)):
    return x - x, torch.zeros_like(x)


@rule(family="neutral", numerics="exact", bidirectional=True)
def sub_self_is_zeros_like_int(x: Tensor(dtype=INTEGRAL)):
    return x - x, torch.zeros_like(x)


@rule(family="neutral", numerics="ieee-edge", bidirectional=True)
def div_self_is_ones_like(x: Tensor(dtype=FLOATING)):
    """0/0 and inf/inf are NaN."""
    return x / x, torch.ones_like(x)


@rule(family="neutral", numerics="exact")
def bitand_self(x: Tensor(dtype=INTEGRAL + BOOL)):
    return x & x, x


@rule(family="neutral", numerics="exact")
def bitor_self(x: Tensor(dtype=INTEGRAL + BOOL)):
    return x | x, x


@rule(family="neutral", numerics="exact", bidirectional=True)
def bitxor_self_is_zeros_like(x: Tensor(dtype=INTEGRAL + BOOL)):
    return x ^ x, torch.zeros_like(x)


@rule(family="neutral", numerics="exact")
def and_true(x: Tensor(dtype=BOOL)):
    return x & torch.ones_like(x), x


@rule(family="neutral", numerics="exact")
def or_false(x: Tensor(dtype=BOOL)):
    return x | torch.zeros_like(x), x


@rule(family="neutral", numerics="exact")
def maximum_self(x: Tensor(dtype=NUMERIC)):
    return torch.maximum(x, x), x


@rule(family="neutral", numerics="exact")
def minimum_self(x: Tensor(dtype=NUMERIC)):
    return torch.minimum(x, x), x


@rule(family="neutral", numerics="exact")
def relu_idempotent(x: Tensor(dtype=NUMERIC)):
    return torch.relu(torch.relu(x)), torch.relu(x)


@rule(family="neutral", numerics="exact")
def clamp_idempotent(x: Tensor(dtype=FLOATING)):
    return torch.clamp(torch.clamp(x, -1.0, 1.0), -1.0, 1.0), torch.clamp(x, -1.0, 1.0)


@rule(family="neutral", numerics="exact")
def clone_is_identity(x: Tensor(dtype=ANY_DTYPE)):
    return x.clone(), x


@rule(family="neutral", numerics="exact")
def detach_is_identity(x: Tensor(dtype=ANY_DTYPE)):
    return x.detach(), x


@rule(family="neutral", numerics="exact")
def reshape_rank1_is_identity(x: Tensor(rank=1)):
    return x.reshape(-1), x

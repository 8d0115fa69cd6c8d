"""A small, stable rule set for the end-to-end tests (the built-in library changes often)."""
import torch

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, FLOATING, Scalar, Tensor, rule


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def e2e_add_commutes(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x + y, y + x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def e2e_mul_commutes(x: Tensor(dtype=ANY_DTYPE, rank=(1, 2, 3, 4)), y: Tensor(dtype=ANY_DTYPE, rank=(1, 2, 3, 4))):
    return x * y, y * x


@rule(family="spelling", numerics="exact", bidirectional=True)
def e2e_add_spelling(x: Tensor(), y: Tensor()):
    return x + y, torch.add(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True)
def e2e_mul_scalar_spelling(x: Tensor(dtype=FLOATING), c: Scalar("float")):
    return x * c, torch.mul(x, c)


@rule(family="layout", numerics="exact")
def e2e_double_transpose(x: Tensor(rank=2)):
    return x.t().t(), x


@rule(family="neutral", numerics="exact")
def e2e_times_one(x: Tensor(dtype=FLOATING)):
    return x, x * 1.0


@rule(family="spelling", numerics="exact", bidirectional=True)
def e2e_relu_spelling(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.nn.functional.relu(x)

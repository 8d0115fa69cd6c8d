"""A user's own rule folder, outside the package (used by the tests)."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, rule


@rule(family="layout", numerics="exact")
def user_double_transpose(x: Tensor(rank=2)):
    return x.t().t(), x


@rule(family="spelling", numerics="exact", bidirectional=True)
def user_add_spelling(x: Tensor(), y: Tensor()):
    return x + y, torch.add(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True)
def user_mul_scalar_spelling(x: Tensor(dtype=FLOATING), c: Scalar("float")):
    return x * c, torch.mul(x, c)


@rule(family="neutral", numerics="exact")
def user_times_one(x: Tensor(dtype=FLOATING)):
    return x, x * 1.0


@rule(family="algebra", numerics="exact", tags=("ac",))
def user_add_commutes(x: Tensor(), y: Tensor()):
    return x + y, y + x


@rule(family="layout", numerics="exact")
def user_transpose_through_add(x: Tensor(rank=2), y: Tensor(rank=2)):
    return (x + y).t(), x.t() + y.t()

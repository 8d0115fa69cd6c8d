"""Small exact rule set for campaign tests (independent of the built-in library, which changes)."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, rule


@rule(family="layout", numerics="exact")
def test_double_t(x: Tensor(rank=2)):
    return x.t().t(), x


@rule(family="spelling", numerics="exact", bidirectional=True)
def test_add_spelling(x: Tensor(), y: Tensor()):
    return x + y, torch.add(x, y)


@rule(family="spelling", numerics="exact", bidirectional=True)
def test_mul_scalar_spelling(x: Tensor(dtype=FLOATING), c: Scalar("float")):
    return x * c, torch.mul(x, c)


@rule(family="spelling", numerics="exact", bidirectional=True)
def test_pow_half_sqrt(x: Tensor(dtype=FLOATING)):
    return x ** 0.5, torch.sqrt(x)


@rule(family="algebra", numerics="exact")
def test_add_comm(x: Tensor(), y: Tensor()):
    return x + y, y + x


@rule(family="neutral", numerics="exact")
def test_mul_one(x: Tensor(dtype=FLOATING)):
    return x * 1.0, x


@rule(family="layout", numerics="exact")
def test_t_through_add(x: Tensor(rank=2), y: Tensor(rank=2)):
    return (x + y).t(), x.t() + y.t()


@rule(family="misc", numerics="exact")
def test_never_fires(x: Tensor(dtype=FLOATING)):
    return torch.erfinv(torch.erfinv(x)), torch.erfinv(torch.erfinv(x)) * 1.0

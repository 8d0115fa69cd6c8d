"""A deliberately WRONG rule, so that campaign tests see `unsound-rewrite` notes deterministically.

Never use outside tests: relu(x) is not abs(x).
"""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule


@rule(family="activation", numerics="exact")
def test_wrong_relu_is_abs(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.abs(x)


@rule(family="algebra", numerics="exact")
def test_wrong_double(x: Tensor(dtype=FLOATING)):
    return x * 2.0, x + x + x

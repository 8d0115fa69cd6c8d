"""Eager is the wrong side (pytorch#193755, open): `torch.remainder` gives a zero result the dividend's sign, not the divisor's as documented (and as Python's % and NumPy give): -2.0 % 1.5 is 1.0, but -3.0 % 1.5 is -0.0 eagerly, +0.0 by Python and compiled. The reciprocal makes the sign visible (-inf against +inf)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return 1.0 / torch.remainder(x, 1.5)


def get_inputs():
    return [torch.tensor([-3.0, -1.5, -0.0, 3.0, -4.5, 1.0, -2.0, 0.75, 2.5, -6.0, 4.0, -0.5, 6.0, -7.5, 0.25, 1.5])]

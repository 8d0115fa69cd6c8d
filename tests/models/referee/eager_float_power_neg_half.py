"""Eager is the wrong side (the same kernel shortcut as ledger #1, reached through float_power): `torch.float_power(x, -0.5)` computes in float64 through the pow kernel's rsqrt shortcut, -inf at -0.0 and NaN at -inf; C99 pow (and compiled) give +inf and +0."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.float_power(x, -0.5)


def get_inputs():
    return [torch.tensor([-0.0, float("-inf"), 0.0, 4.0, 0.25, 9.0, 2.0, 1.0])]

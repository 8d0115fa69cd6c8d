"""Eager is the wrong side (ledger #1, pytorch#127163): `x ** -0.5` takes eager's rsqrt shortcut, -inf at -0.0 and NaN at -inf; C99 pow (and compiled) give +inf and +0."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x ** -0.5 + 1.0


def get_inputs():
    return [torch.tensor([-0.0, float("-inf"), 0.0, 4.0, 0.25, 9.0, 2.0, 1.0])]

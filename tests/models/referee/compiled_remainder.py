"""Compiled is the wrong side (ledger #8): vectorized float remainder is a - floor(a / b) * b."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.remainder(a, b)


def get_inputs():
    return [torch.tensor([5.5, -5.5, 1e20, 3e9, 7.0, 1.0, 0.25, 100.0]), torch.tensor([float("inf"), float("-inf"), 3.0, 7.0, 0.7, 0.1, 1.0, 6.0])]

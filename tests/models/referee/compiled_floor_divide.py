"""Compiled is the wrong side (ledger #7): float floor division lowered to floor(a / b)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.floor_divide(x, 0.1)


def get_inputs():
    return [torch.tensor([0.5, 1.5, 2.5, 3.0, 1.0, float("inf"), float("-inf"), -0.5])]

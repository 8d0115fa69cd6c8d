"""Compiled is the wrong side (ledger #3): float x * 0 folded to 0 (NaN/inf give 0)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x, x * 0)


def get_inputs():
    return [torch.tensor([float("-inf"), float("nan"), -1.0, 2.0, float("inf"), 0.5, -3.0, 1.0])]

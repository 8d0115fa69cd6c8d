"""Histogram bin edges by floor division, `(x // 0.2) * 0.2`: ledger #7 (float floor division lowered to floor(a / b)) on the special inputs."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.floor_divide(x, 0.2) * 0.2 + 0.1


def get_inputs():
    return [torch.randn(8, 32) * 3.0]

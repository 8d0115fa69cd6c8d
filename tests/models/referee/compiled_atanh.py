"""Compiled is the wrong side (ledger #10): vectorized atanh emitted as 0.5 * log((1 + x) / (1 - x))."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.atanh(x)


def get_inputs():
    return [torch.tensor([1e-8, -1e-8, 1e-5, -3e-7, 1e-3, 0.5, 0.9, -0.25] * 2)]

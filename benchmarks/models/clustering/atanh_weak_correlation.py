"""Fisher z of weak correlations, `atanh(r)` with |r| ~ 1e-4: ledger #10 (vectorized atanh is 0.5 log((1 + x) / (1 - x)), CPU)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, r):
        return torch.atanh(r * 1e-3) * 2.0


def get_inputs():
    return [torch.randn(8, 64) * 0.2]

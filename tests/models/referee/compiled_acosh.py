"""Compiled is the wrong side (ledger #9): vectorized acosh overflows above ~1.8e19."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.acosh(x)


def get_inputs():
    return [torch.tensor([2.0, 1e10, 1e19, 2e19, 1e25, 1e30, 3e38, 5.0])]

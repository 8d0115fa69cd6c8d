"""Compiled is the wrong side (ledger #6): vectorized expm1 emitted as exp(x) - 1."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.expm1(x)


def get_inputs():
    return [torch.tensor([1e-8, -1e-8, 1e-5, -3e-7, 1e-3, 0.5, 2.0, -1.0] * 2)]

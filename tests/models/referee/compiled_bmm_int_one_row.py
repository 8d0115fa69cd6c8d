"""Compiled is the wrong side (ledger #19): an int8 bmm with one row is lowered to an int64 mul + sum."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, u, x):
        return torch.matmul(u, x.transpose(1, 2))


def get_inputs():
    return [torch.full((64,), 3, dtype=torch.int8), torch.full((2, 4, 64), 2, dtype=torch.int8)]

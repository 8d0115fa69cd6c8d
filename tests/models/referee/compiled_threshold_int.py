"""Compiled is the wrong side (ledger #18): threshold of int32 with a float value goes through float32."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.threshold(x, 0.1, 20.0)


def get_inputs():
    return [torch.tensor([2147483647, 16777217, 123456789, 5, -7], dtype=torch.int32)]

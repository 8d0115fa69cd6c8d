"""A large float32 reduction: 2**20 elements summed (Inductor reorders the sum; not a bug)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        s = x.sum()
        m = (x * 2.0).mean()
        return s, m + s, (x * x).sum()


def get_inputs():
    return [torch.randn(2**20) + 0.5]

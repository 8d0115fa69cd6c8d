"""A running total over 32 steps; the size sweep's 65, 127, 128 and 129 are longer than 64."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.cumsum(-1) * 0.5


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(4, 32, generator=g)]

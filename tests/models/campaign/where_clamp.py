"""A select and a clamp (KernelBench style)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        y = torch.where(x > 0, x * 2.0, x + x)
        return torch.clamp(y, min=-1.0, max=1.0)


def get_inputs():
    return [torch.randn(8)]

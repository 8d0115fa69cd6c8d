"""Integer arithmetic and a comparison (KernelBench style)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, i, x):
        return (i * 3 + i) % 7, torch.where(i > 2, x, x * 2.0)


def get_inputs():
    return [torch.randint(0, 10, (6,)), torch.randn(6)]

"""Row sums of a sum (KernelBench style)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        return (x + y).sum(dim=1), x.t().t() * 1.0


def get_inputs():
    return [torch.randn(4, 6), torch.randn(4, 6)]

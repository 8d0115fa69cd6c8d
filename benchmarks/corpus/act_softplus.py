"""Softplus variants: F.softplus default (beta 1, threshold 20), beta 2 threshold 10, and the positive-std parameterization softplus(x) + 1e-4 of a Gaussian policy head; 4096 x 4096, values spanning the threshold."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 4096
cols = 4096


class Model(nn.Module):
    def forward(self, x):
        a = F.softplus(x)
        b = F.softplus(x, beta=2.0, threshold=10.0)
        std = F.softplus(x[:, :64]) + 1e-4
        return a - b, std


def get_inputs():
    return [torch.randn(rows, cols) * 12.0]


def get_init_inputs():
    return []

"""Order statistics: median over the last dim and the 90th-percentile value via kthvalue (robust per-row scaling); 8192 rows x 1025 values."""
import torch
import torch.nn as nn

rows = 8192
cols = 1025


class Model(nn.Module):
    def forward(self, x):
        med = torch.median(x, dim=-1).values
        k = int(0.9 * x.shape[-1])
        p90 = torch.kthvalue(x, k, dim=-1).values
        return (x - med[:, None]) / (p90 - med).clamp(min=1e-3)[:, None]


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []

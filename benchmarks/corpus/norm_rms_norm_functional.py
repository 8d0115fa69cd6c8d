"""Single op: F.rms_norm over the last dim with a weight; batch 4, seq 2048, hidden 4096."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
seq_len = 2048
hidden = 4096
eps = 1e-6


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(hidden) + 0.05 * torch.randn(hidden))

    def forward(self, x):
        return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden, eps]

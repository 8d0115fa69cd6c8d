"""Single op: torch.cumsum along dim 1 (a prefix sum over long sequences); 256 x 32768."""
import torch
import torch.nn as nn

batch_size = 256
seq_len = 32768
scan_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, seq_len)]


def get_init_inputs():
    return [scan_dim]

"""Outer products: torch.outer of position and frequency vectors (sinusoidal tables), batched outer via broadcasting (b,i,1)*(b,1,j), and torch.ger-style rank-1 update of a weight; 4096 x 1024 and batch 64 x 256 x 256."""
import torch
import torch.nn as nn

num_positions = 4096
num_freqs = 1024
batch_size = 64
dim = 256


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, dim) / dim ** 0.5)

    def forward(self, positions, freqs, a, b):
        angles = torch.outer(positions, freqs)
        table = torch.cat([angles.sin(), angles.cos()], dim=-1)
        batched = a.unsqueeze(2) * b.unsqueeze(1)
        updated = self.weight + 0.01 * torch.outer(a[0], b[0])
        return table, batched, updated


def get_inputs():
    return [
        torch.arange(num_positions).float(),
        1.0 / (10000.0 ** (torch.arange(num_freqs).float() / num_freqs)),
        torch.randn(batch_size, dim),
        torch.randn(batch_size, dim),
    ]


def get_init_inputs():
    return [dim]

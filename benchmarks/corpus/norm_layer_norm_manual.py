"""LayerNorm written by hand: mean, biased variance, (x - mean) * rsqrt(var + eps) * gamma + beta over the last dim; batch 16, seq 512, hidden 1024."""
import torch
import torch.nn as nn

batch_size = 16
seq_len = 512
hidden = 1024
eps = 1e-5


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(hidden) + 0.1 * torch.randn(hidden))
        self.beta = nn.Parameter(0.1 * torch.randn(hidden))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = (x - mean).pow(2).mean(dim=-1, keepdim=True)
        return (x - mean) * torch.rsqrt(var + self.eps) * self.gamma + self.beta


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 3.0 + 1.0]


def get_init_inputs():
    return [hidden, eps]

"""Zero-order-hold discretization of a diagonal state-space layer (S4D-style): dA = exp(dt*A), dB = expm1(dt*A)/A * B, with small learned step sizes; batch 8 x 1024 steps x 64 channels x 16 states."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 1024
channels = 64
state_size = 16


class Model(nn.Module):
    def __init__(self, channels, state_size):
        super().__init__()
        self.log_dt = nn.Parameter(torch.linspace(-9.0, -4.0, channels))
        self.log_neg_a = nn.Parameter(torch.log(torch.arange(1, state_size + 1, dtype=torch.float32)).repeat(channels, 1))
        self.b = nn.Parameter(torch.randn(channels, state_size) * 0.5)

    def forward(self, x):
        dt = torch.exp(self.log_dt).unsqueeze(-1)
        a = -torch.exp(self.log_neg_a)
        da = torch.exp(dt * a)
        db = torch.expm1(dt * a) / a * self.b
        u = x.unsqueeze(-1) * db
        return da, u.sum(dim=1)


def get_inputs():
    return [torch.randn(batch_size, seq_len, channels)]


def get_init_inputs():
    return [channels, state_size]

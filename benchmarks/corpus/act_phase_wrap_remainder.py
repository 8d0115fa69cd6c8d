"""Sinusoidal features of a wrapped phase: phase = remainder(t * freq, 2*pi), then sin and cos, for timestamps over a long range; 256 x 2048 timestamps, 8 frequencies."""
import math

import torch
import torch.nn as nn

batch_size = 256
seq_len = 2048
num_freqs = 8


class Model(nn.Module):
    def __init__(self, num_freqs):
        super().__init__()
        self.register_buffer("freqs", 2.0 ** torch.arange(num_freqs, dtype=torch.float32))

    def forward(self, t):
        phase = torch.remainder(t.unsqueeze(-1) * self.freqs, 2 * math.pi)
        return torch.cat([torch.sin(phase), torch.cos(phase), phase], dim=-1)


def get_inputs():
    return [torch.rand(batch_size, seq_len) * 1000.0]


def get_init_inputs():
    return [num_freqs]

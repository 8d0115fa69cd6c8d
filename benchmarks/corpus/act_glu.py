"""Gated linear unit: Conv1d doubling channels then F.glu over channels (ConvS2S / Conformer conv module), plus a GEGLU on the last dim; batch 16, 512 ch, 1024 steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 512
seq_len = 1024


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.pointwise = nn.Conv1d(channels, 2 * channels, 1)

    def forward(self, x):
        glu = F.glu(self.pointwise(x), dim=1)
        a, b = x.transpose(1, 2).chunk(2, dim=-1)
        geglu = a * F.gelu(b)
        return glu, geglu


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels]

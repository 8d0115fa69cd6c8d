"""WaveNet gated activation: dilated causal Conv1d to 2C, tanh(filter) * sigmoid(gate), 1x1 residual and skip outputs; batch 8, 256 ch, 4000 steps, dilation 8."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 256
seq_len = 4000
dilation = 8


class Model(nn.Module):
    def __init__(self, channels, dilation):
        super().__init__()
        self.dilation = dilation
        self.conv = nn.Conv1d(channels, 2 * channels, 2, dilation=dilation)
        self.res = nn.Conv1d(channels, channels, 1)
        self.skip = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        h = self.conv(F.pad(x, (self.dilation, 0)))
        f, g = h.chunk(2, dim=1)
        z = torch.tanh(f) * torch.sigmoid(g)
        return x + self.res(z), self.skip(z)


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, dilation]

"""Temporal conv net residual block: two causal dilated Conv1d k3 (dilation 4, left pad + trim) with ReLU, 1x1 residual; batch 16, 128 ch, 4096 steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 128
seq_len = 4096
kernel_size = 3
dilation = 4


class Model(nn.Module):
    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.pad = (kernel_size - 1) * dilation
        self.conv1 = nn.Conv1d(channels, channels, kernel_size, dilation=dilation, padding=self.pad)
        self.conv2 = nn.Conv1d(channels, channels, kernel_size, dilation=dilation, padding=self.pad)
        self.res = nn.Conv1d(channels, channels, 1)

    def forward(self, x):
        n = x.shape[-1]
        h = F.relu(self.conv1(x)[..., :n])
        h = F.relu(self.conv2(h)[..., :n])
        return F.relu(h + self.res(x))


def get_inputs():
    return [torch.randn(batch_size, channels, seq_len)]


def get_init_inputs():
    return [channels, kernel_size, dilation]

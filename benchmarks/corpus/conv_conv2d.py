"""Single op: Conv2d 3x3 padding 1 with bias; batch 8, 128->128 ch, 56x56."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 128
out_channels = 128
kernel_size = 3
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]

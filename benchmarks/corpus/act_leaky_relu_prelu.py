"""Leaky rectifiers: conv with F.leaky_relu(0.2) (GAN discriminator) then nn.PReLU with learned per-channel slopes; batch 16, 128 ch, 64x64."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 128
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.prelu = nn.PReLU(channels, init=0.25)
        with torch.no_grad():
            self.prelu.weight.uniform_(0.05, 0.5)

    def forward(self, x):
        h = F.leaky_relu(self.conv(x), negative_slope=0.2)
        return self.prelu(h - 0.1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

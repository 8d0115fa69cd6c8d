"""DCGAN generator block: ConvTranspose2d 4x4 stride 2 - BN - ReLU; batch 16, 256->128 ch, 32x32->64x64."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 256
out_channels = 128
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

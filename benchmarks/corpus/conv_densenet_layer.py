"""DenseNet-121 dense layer: BN-ReLU-conv1x1 (4k bottleneck), BN-ReLU-conv3x3 (k=32 new maps), concat with input; batch 8, 256 ch, 28x28."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
in_channels = 256
growth_rate = 32
bn_size = 4
height = 28
width = 28


class Model(nn.Module):
    def __init__(self, in_channels, growth_rate, bn_size):
        super().__init__()
        mid = bn_size * growth_rate
        self.norm1 = nn.BatchNorm2d(in_channels)
        self.conv1 = nn.Conv2d(in_channels, mid, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, growth_rate, 3, padding=1, bias=False)

    def forward(self, x):
        h = self.conv1(F.relu(self.norm1(x)))
        h = self.conv2(F.relu(self.norm2(h)))
        return torch.cat([x, h], dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, growth_rate, bn_size]

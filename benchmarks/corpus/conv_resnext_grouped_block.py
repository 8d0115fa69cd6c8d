"""ResNeXt-50 32x4d bottleneck: 1x1 - BN - ReLU, grouped 3x3 (32 groups) - BN - ReLU, 1x1 - BN, + identity; batch 8, 256 ch, 56x56."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 256
width_ch = 128
groups = 32
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels, width_ch, groups):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width_ch, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width_ch)
        self.conv2 = nn.Conv2d(width_ch, width_ch, 3, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width_ch)
        self.conv3 = nn.Conv2d(width_ch, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return F.relu(self.bn3(self.conv3(h)) + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, width_ch, groups]

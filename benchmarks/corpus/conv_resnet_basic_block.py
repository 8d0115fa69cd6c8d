"""ResNet basic block: conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU; batch 8, 64 ch, 56x56."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 64
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

"""MobileNetV2 inverted residual: 1x1 expand x6 - BN - ReLU6, depthwise 3x3 - BN - ReLU6, 1x1 project - BN, + identity; batch 8, 24 ch, 56x56."""
import torch
import torch.nn as nn

batch_size = 8
channels = 24
expand_ratio = 6
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels, expand_ratio):
        super().__init__()
        hidden = channels * expand_ratio
        self.block = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, channels, 1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x):
        return x + self.block(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, expand_ratio]

"""Feature pyramid network top-down path: 1x1 laterals on C3/C4/C5, nearest 2x upsample + add, 3x3 smoothing; batch 2, ResNet-50 maps at 800x800 input."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
c3_channels = 512
c4_channels = 1024
c5_channels = 2048
fpn_channels = 256
c3_size = 100


class Model(nn.Module):
    def __init__(self, c3_channels, c4_channels, c5_channels, fpn_channels):
        super().__init__()
        self.lat3 = nn.Conv2d(c3_channels, fpn_channels, 1)
        self.lat4 = nn.Conv2d(c4_channels, fpn_channels, 1)
        self.lat5 = nn.Conv2d(c5_channels, fpn_channels, 1)
        self.smooth3 = nn.Conv2d(fpn_channels, fpn_channels, 3, padding=1)
        self.smooth4 = nn.Conv2d(fpn_channels, fpn_channels, 3, padding=1)
        self.smooth5 = nn.Conv2d(fpn_channels, fpn_channels, 3, padding=1)

    def forward(self, c3, c4, c5):
        p5 = self.lat5(c5)
        p4 = self.lat4(c4) + F.interpolate(p5, size=c4.shape[-2:], mode="nearest")
        p3 = self.lat3(c3) + F.interpolate(p4, size=c3.shape[-2:], mode="nearest")
        return self.smooth3(p3), self.smooth4(p4), self.smooth5(p5)


def get_inputs():
    return [
        torch.randn(batch_size, c3_channels, c3_size, c3_size),
        torch.randn(batch_size, c4_channels, c3_size // 2, c3_size // 2),
        torch.randn(batch_size, c5_channels, c3_size // 4, c3_size // 4),
    ]


def get_init_inputs():
    return [c3_channels, c4_channels, c5_channels, fpn_channels]

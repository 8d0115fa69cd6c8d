"""MobileNetV1 depthwise-separable conv: depthwise 3x3 - BN - ReLU, pointwise 1x1 - BN - ReLU; batch 8, 128->128 ch, 112x112."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 128
out_channels = 128
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.dw = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.bn1 = nn.BatchNorm2d(in_channels)
        self.pw = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        x = torch.relu(self.bn1(self.dw(x)))
        return torch.relu(self.bn2(self.pw(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

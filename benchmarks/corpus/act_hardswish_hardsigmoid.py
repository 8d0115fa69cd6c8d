"""MobileNetV3 activations: hardswish after a conv, SE gate with hardsigmoid, and the hand-written x * relu6(x + 3) / 6 form; batch 8, 96 ch, 28x28."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 96
height = 28
width = 28
squeeze = 24


class Model(nn.Module):
    def __init__(self, channels, squeeze):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x):
        h = F.hardswish(self.conv(x))
        s = F.hardsigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(h, 1)))))
        h = h * s
        manual = h * F.relu6(h + 3.0) / 6.0
        return manual


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 3.0]


def get_init_inputs():
    return [channels, squeeze]

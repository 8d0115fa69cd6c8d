"""ResNet stem: conv7x7 stride 2 - BN - ReLU - maxpool3x3 stride 2; batch 8, 3->64 ch, 224x224."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 3
out_channels = 64
image_size = 224


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 7, stride=2, padding=3, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(self.relu(self.bn(self.conv(x))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, out_channels]

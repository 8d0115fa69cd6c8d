"""UNet decoder block: bilinear 2x upsample (interpolate), concat with skip, (conv3x3-BN-ReLU) x2; batch 4, 128+64->64 ch, 64x64->128x128."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 128
skip_channels = 64
out_channels = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, skip_channels, out_channels):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels + skip_channels, out_channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def forward(self, x, skip):
        x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        x = torch.cat([x, skip], dim=1)
        x = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(x)))


def get_inputs():
    return [
        torch.randn(batch_size, in_channels, height, width),
        torch.randn(batch_size, skip_channels, 2 * height, 2 * width),
    ]


def get_init_inputs():
    return [in_channels, skip_channels, out_channels]

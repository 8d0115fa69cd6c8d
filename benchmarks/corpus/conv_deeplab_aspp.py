"""DeepLabV3 ASPP head: 1x1 conv, three dilated 3x3 convs (rates 6/12/18), image pooling branch upsampled by interpolate, concat, 1x1 project; batch 2, 1024->256 ch, 33x33."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
in_channels = 1024
out_channels = 256
height = 33
width = 33


def _branch(cin, cout, k, dilation):
    pad = 0 if k == 1 else dilation
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=pad, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.b0 = _branch(in_channels, out_channels, 1, 1)
        self.b1 = _branch(in_channels, out_channels, 3, 6)
        self.b2 = _branch(in_channels, out_channels, 3, 12)
        self.b3 = _branch(in_channels, out_channels, 3, 18)
        self.pool_conv = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.project = _branch(5 * out_channels, out_channels, 1, 1)

    def forward(self, x):
        size = x.shape[-2:]
        pooled = F.relu(self.pool_conv(F.adaptive_avg_pool2d(x, 1)))
        pooled = F.interpolate(pooled, size=size, mode="bilinear", align_corners=False)
        y = torch.cat([self.b0(x), self.b1(x), self.b2(x), self.b3(x), pooled], dim=1)
        return self.project(y)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""EfficientNet MBConv: 1x1 expand x6 - BN - SiLU, depthwise 5x5 - BN - SiLU, SE (conv1x1 squeeze), 1x1 project - BN, + identity; batch 8, 40 ch, 28x28."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 40
expand_ratio = 6
se_ratio = 0.25
height = 28
width = 28


class Model(nn.Module):
    def __init__(self, channels, expand_ratio, se_ratio):
        super().__init__()
        hidden = channels * expand_ratio
        squeezed = max(1, int(channels * se_ratio))
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn0 = nn.BatchNorm2d(hidden)
        self.dw = nn.Conv2d(hidden, hidden, 5, padding=2, groups=hidden, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.se_reduce = nn.Conv2d(hidden, squeezed, 1)
        self.se_expand = nn.Conv2d(squeezed, hidden, 1)
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        h = F.silu(self.bn0(self.expand(x)))
        h = F.silu(self.bn1(self.dw(h)))
        s = F.adaptive_avg_pool2d(h, 1)
        s = torch.sigmoid(self.se_expand(F.silu(self.se_reduce(s))))
        h = h * s
        return x + self.bn2(self.project(h))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, expand_ratio, se_ratio]

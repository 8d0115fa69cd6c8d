"""Pooling zoo on one feature map: max_pool2d, avg_pool2d (count_include_pad False), adaptive avg and max to 7x7, global avg; batch 16, 256 ch, 28x28."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 256
height = 28
width = 28


class Model(nn.Module):
    def forward(self, x):
        mp = F.max_pool2d(x, 2, stride=2)
        ap = F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)
        aap = F.adaptive_avg_pool2d(x, (7, 7))
        amp = F.adaptive_max_pool2d(x, (7, 7))
        gap = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return mp, ap, aap + amp, gap


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

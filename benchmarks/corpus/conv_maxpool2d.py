"""Single op: max_pool2d 3x3 stride 2 padding 1; batch 16, 64 ch, 112x112."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 64
height = 112
width = 112


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

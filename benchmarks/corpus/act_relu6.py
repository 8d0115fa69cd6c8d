"""Single op: F.relu6 (MobileNetV2 activation), inputs spanning below 0 and above 6; batch 8, 144 ch, 56x56."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 144
height = 56
width = 56


class Model(nn.Module):
    def forward(self, x):
        return F.relu6(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 4.0 + 2.0]


def get_init_inputs():
    return []

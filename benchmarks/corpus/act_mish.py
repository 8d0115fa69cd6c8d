"""Single op: F.mish (YOLOv4 backbone activation); batch 8, 64 ch, 152x152."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
channels = 64
height = 152
width = 152


class Model(nn.Module):
    def forward(self, x):
        return F.mish(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 3.0]


def get_init_inputs():
    return []

"""Single op: mean over the spatial dims (2, 3) with keepdim (global average pooling); batch 32, 2048 ch, 7x7 (ResNet-50 head)."""
import torch
import torch.nn as nn

batch_size = 32
channels = 2048
height = 7
width = 7


class Model(nn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3), keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

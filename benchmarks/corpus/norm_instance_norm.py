"""Single op: nn.InstanceNorm2d with affine parameters (style-transfer network); batch 8, 64 ch, 128x128."""
import torch
import torch.nn as nn

batch_size = 8
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

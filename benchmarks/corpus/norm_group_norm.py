"""Single op: nn.GroupNorm with 32 groups over 256 channels (affine); batch 8, 256 ch, 56x56."""
import torch
import torch.nn as nn

batch_size = 8
channels = 256
groups = 32
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups, channels]

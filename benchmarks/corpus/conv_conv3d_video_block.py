"""3D CNN video block (C3D/R3D style): Conv3d 3x3x3 - BN3d - ReLU - MaxPool3d (1,2,2); batch 2, 64 ch, 16 frames, 56x56."""
import torch
import torch.nn as nn

batch_size = 2
in_channels = 64
out_channels = 64
frames = 16
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm3d(out_channels)
        self.pool = nn.MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x))))


def get_inputs():
    return [torch.randn(batch_size, in_channels, frames, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""Single op: ConvTranspose2d 3x3 stride 2 with output_padding 1 (decoder upsampling); batch 8, 128->64 ch, 56x56->112x112."""
import torch
import torch.nn as nn

batch_size = 8
in_channels = 128
out_channels = 64
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

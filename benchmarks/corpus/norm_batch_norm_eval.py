"""Single op: nn.BatchNorm2d in eval mode with non-trivial running statistics and affine parameters; batch 16, 256 ch, 56x56."""
import torch
import torch.nn as nn

batch_size = 16
channels = 256
height = 56
width = 56


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.normal_(0.0, 0.5)
            self.bn.running_var.uniform_(0.25, 4.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.normal_(0.0, 0.2)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

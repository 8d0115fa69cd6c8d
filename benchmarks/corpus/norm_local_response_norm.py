"""Single op: nn.LocalResponseNorm(size 5, alpha 1e-4, beta 0.75, k 2) as in AlexNet after conv1; batch 16, 96 ch, 55x55."""
import torch
import torch.nn as nn

batch_size = 16
channels = 96
height = 55
width = 55


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lrn = nn.LocalResponseNorm(size=5, alpha=1e-4, beta=0.75, k=2.0)

    def forward(self, x):
        return self.lrn(x)


def get_inputs():
    return [torch.relu(torch.randn(batch_size, channels, height, width)) * 10.0]


def get_init_inputs():
    return []

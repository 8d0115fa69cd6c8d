"""sin_ written through a view of the input, then a softmax of the input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        x.view(-1)[:40].sin_()
        return torch.softmax(x * 4, -1)


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(8, 16, generator=g) * 3]

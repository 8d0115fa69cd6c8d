"""A gated MLP: sigmoid(x W1) * (x W2). Ordinary inputs; huge ones (the special set) overflow exp inside a wrong sigmoid."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, w1, w2):
        return torch.sigmoid(x @ w1) * (x @ w2)


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(8, 16, generator=g), torch.randn(16, 16, generator=g) * 0.25, torch.randn(16, 16, generator=g) * 0.25]

"""Softmax attention: ordinary scores; huge ones (the special set) need the max taken out of the softmax."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, q, k, v):
        return torch.softmax(q @ k.t() * 0.25, -1) @ v


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g)]

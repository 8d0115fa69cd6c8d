"""exp(x) times a gain: float32 inputs; the float16/bfloat16 sweep takes exp to half precision."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, w):
        return torch.exp(x) * w


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(8, 16, generator=g), torch.randn(16, generator=g)]

"""Four outputs for the output faults: a matmul, its argmax, small values and a log (NaN and -inf on the special set)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, w):
        y = x @ w
        return y, y.argmax(-1), x * 1e-6, torch.log(x.abs())


def get_inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(8, 16, generator=g), torch.randn(16, 12, generator=g)]

"""Bilinear interaction via einsum 'bi,oij,bj->bo' (nn.Bilinear semantics) and a batched trace 'bii->b'; batch 1024, 256 x 256 -> 128 outputs."""
import torch
import torch.nn as nn

batch_size = 1024
in1 = 256
in2 = 256
out_features = 128


class Model(nn.Module):
    def __init__(self, in1, in2, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in1, in2) / (in1 * in2) ** 0.25 / 16)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x1, x2):
        y = torch.einsum("bi,oij,bj->bo", x1, self.weight, x2) + self.bias
        outer = torch.einsum("bi,bj->bij", x1, x2)
        trace = torch.einsum("bii->b", outer)
        return y, trace


def get_inputs():
    return [torch.randn(batch_size, in1), torch.randn(batch_size, in2)]


def get_init_inputs():
    return [in1, in2, out_features]

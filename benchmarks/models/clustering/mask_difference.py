"""A band mask as the difference of two causal masks from arange, applied to scores: ledger #15 (a != of two index-built boolean masks crashes Inductor's bounds analysis)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, scores):
        n = scores.shape[-1]
        a = torch.arange(n)
        causal = a[None, :] <= a[:, None]
        band = causal != causal
        return scores.masked_fill(band, 0.0).softmax(-1)


def get_inputs():
    return [torch.randn(2, 16, 16)]

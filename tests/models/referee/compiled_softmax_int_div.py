"""Compiled is the wrong side (ledger #21): Inductor's joint-graph softmax pattern computes x - amax(x) in the integer dtype (wraps), eager divides to float first."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x / 0.5, -1)


def get_inputs():
    return [torch.tensor([[-128, 127, 0, 1]], dtype=torch.int8)]

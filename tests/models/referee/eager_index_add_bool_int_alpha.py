"""Eager is the wrong side (a sibling of ledger #16): index_add on a bool tensor with an integer alpha (2) runs eagerly, where torch.add's rule accepts only a bool alpha on bool tensors; compiled refuses the program."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, base, idx, src):
        return torch.index_add(base, 0, idx, src, alpha=2)


def get_inputs():
    return [torch.zeros(4, 8, dtype=torch.bool), torch.tensor([0, 2]), torch.ones(2, 8, dtype=torch.bool)]

"""Eager is the wrong side (ledger #16), reached by the integer dtype sweep: index_add with alpha=0.5 of float tensors is fine; of integers eager truncates alpha to 0 and runs silently, where torch.add's rule rejects a float alpha on integers, as the compiled program (its meta check) does."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, base, idx, src):
        return torch.index_add(base, 0, idx, src, alpha=0.5)


def get_inputs():
    return [torch.zeros(4, 8), torch.tensor([0, 2]), torch.full((2, 8), 4.0)]

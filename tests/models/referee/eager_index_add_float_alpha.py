"""Eager is the wrong side (ledger #16): index_add on integers with a float alpha runs eagerly with alpha truncated to 0; torch.add's rule rejects a float alpha on integers, as compiled (its meta check) does."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, base, idx, src):
        return torch.index_add(base, 0, idx, src, alpha=0.5)


def get_inputs():
    return [torch.zeros(4, 8, dtype=torch.int8), torch.tensor([0, 2]), torch.full((2, 8), 4, dtype=torch.int8)]

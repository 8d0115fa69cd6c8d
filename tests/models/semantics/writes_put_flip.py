"""Writes an input twice: index_put_ of a few rows, then add_ of a flipped view of the same input (the second write
reads the first's result through the view); returns a reduction, the input's final value is what it leaves behind."""
import torch


class Model(torch.nn.Module):
    def forward(self, x, idx, val):
        x.index_put_((idx,), val)
        x.add_(x.flip(0))
        return x.sum(0)


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8, 4), torch.tensor([1, 6]), torch.randn(2, 4)]

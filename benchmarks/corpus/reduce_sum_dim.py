"""Single op: torch.sum over dim 1 (the 4096-long middle dim) of a 3-D tensor; shape 32 x 4096 x 256."""
import torch
import torch.nn as nn

batch_size = 32
dim1 = 4096
dim2 = 256
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]

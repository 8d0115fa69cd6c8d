"""torch.max(x, dim) returning (values, indices) as in max-over-time pooling of a text CNN, plus min values; batch 64, 256 filters, 2048 steps."""
import torch
import torch.nn as nn

batch_size = 64
num_filters = 256
seq_len = 2048


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.max(x, dim=2)
        min_values = torch.min(x, dim=2).values
        return values, indices, values - min_values


def get_inputs():
    return [torch.randn(batch_size, num_filters, seq_len)]


def get_init_inputs():
    return []

"""Single op: torch.index_select of rows of a feature table by an index vector (batch gathering of cached features); 262144 x 128 table, 131072 indices."""
import torch
import torch.nn as nn

num_rows = 262144
row_dim = 128
num_indices = 131072


class Model(nn.Module):
    def forward(self, table, idx):
        return torch.index_select(table, 0, idx)


def get_inputs():
    return [torch.randn(num_rows, row_dim), torch.randint(0, num_rows, (num_indices,))]


def get_init_inputs():
    return []

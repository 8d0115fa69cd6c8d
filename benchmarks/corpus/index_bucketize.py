"""torch.bucketize of continuous features into fixed quantile boundaries (int64 bucket ids) and searchsorted(right=True) into a sorted per-row grid; 1M values, 255 boundaries."""
import torch
import torch.nn as nn

num_values = 1048576
num_boundaries = 255
grid_rows = 4096
grid_size = 64
queries_per_row = 32


class Model(nn.Module):
    def __init__(self, num_boundaries):
        super().__init__()
        self.register_buffer("boundaries", torch.linspace(-3.0, 3.0, num_boundaries))

    def forward(self, x, grid, queries):
        buckets = torch.bucketize(x, self.boundaries)
        positions = torch.searchsorted(grid, queries, right=True)
        return buckets, positions


def get_inputs():
    grid = torch.sort(torch.randn(grid_rows, grid_size), dim=-1).values
    return [torch.randn(num_values), grid, torch.randn(grid_rows, queries_per_row)]


def get_init_inputs():
    return [num_boundaries]

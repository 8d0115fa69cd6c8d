"""Bool reductions on comparisons: any(|x| > thresh) per row, all(x >= lower) per column, and all-finite check (bool outputs); 8192 x 4096."""
import torch
import torch.nn as nn

rows = 8192
cols = 4096
thresh = 4.0
lower = -4.5


class Model(nn.Module):
    def __init__(self, thresh, lower):
        super().__init__()
        self.thresh = thresh
        self.lower = lower

    def forward(self, x):
        outlier_row = (x.abs() > self.thresh).any(dim=1)
        above_col = (x >= self.lower).all(dim=0)
        finite = torch.isfinite(x).all()
        return outlier_row, above_col, finite


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [thresh, lower]

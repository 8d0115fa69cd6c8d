"""fp16 reductions: half-precision input summed with dtype=torch.float32 accumulation over the last dim, and a plain fp16 mean over dim 0; 4096 x 4096 fp16."""
import torch
import torch.nn as nn

rows = 4096
cols = 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=-1, dtype=torch.float32), x.mean(dim=0)


def get_inputs():
    return [torch.randn(rows, cols).half()]


def get_init_inputs():
    return []

"""Single op: F.logsigmoid over large-magnitude logits (DPO / skip-gram negative-sampling loss term); 8192 x 1024."""
import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 8192
cols = 1024


class Model(nn.Module):
    def forward(self, x):
        return F.logsigmoid(x)


def get_inputs():
    return [torch.randn(rows, cols) * 10.0]


def get_init_inputs():
    return []

"""Binary cross-entropy on probabilities: sigmoid of a segmentation head then F.binary_cross_entropy (mean) against a 0/1 mask; batch 16, 1x256x256."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
height = 256
width = 256


class Model(nn.Module):
    def forward(self, logits, mask):
        return F.binary_cross_entropy(torch.sigmoid(logits), mask)


def get_inputs():
    return [
        torch.randn(batch_size, 1, height, width) * 2.0,
        (torch.rand(batch_size, 1, height, width) > 0.5).float(),
    ]


def get_init_inputs():
    return []

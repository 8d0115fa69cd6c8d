"""torch.prod over a short dim: product of 16 per-step survival probabilities in (0.9, 1) per sequence and item, plus a keepdim prod of per-channel gains near 1; 2048 x 1024 x 16."""
import torch
import torch.nn as nn

batch_size = 2048
num_items = 1024
num_steps = 16


class Model(nn.Module):
    def forward(self, p, gains):
        survival = torch.prod(p, dim=-1)
        total_gain = torch.prod(gains, dim=0, keepdim=True)
        return survival, total_gain


def get_inputs():
    return [
        0.9 + 0.1 * torch.rand(batch_size, num_items, num_steps),
        1.0 + 0.01 * torch.randn(num_steps, num_items),
    ]


def get_init_inputs():
    return []

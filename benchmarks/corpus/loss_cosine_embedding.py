"""F.cosine_embedding_loss (margin 0.2) between pairs of sentence embeddings with +1/-1 similarity labels; batch 4096 pairs, dim 768."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 768
margin = 0.2


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, a, b, y):
        return F.cosine_embedding_loss(a, b, y, margin=self.margin)


def get_inputs():
    y = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), y]


def get_init_inputs():
    return [margin]

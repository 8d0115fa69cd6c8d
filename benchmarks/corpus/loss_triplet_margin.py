"""Face-embedding metric loss: L2-normalize then F.triplet_margin_loss (margin 0.2, p=2) over anchor/positive/negative; batch 4096, dim 512."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 512
margin = 0.2


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative):
        a = F.normalize(anchor, dim=-1)
        p = F.normalize(positive, dim=-1)
        n = F.normalize(negative, dim=-1)
        return F.triplet_margin_loss(a, p, n, margin=self.margin, p=2)


def get_inputs():
    anchor = torch.randn(batch_size, dim)
    return [anchor, anchor + 0.5 * torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [margin]

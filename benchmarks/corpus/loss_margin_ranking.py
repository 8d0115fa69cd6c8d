"""Learning-to-rank loss: scores from a shared linear scorer for two candidate lists, F.margin_ranking_loss (margin 1.0) with +1/-1 preferences; batch 65536 pairs, 256 features."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 65536
num_features = 256
margin = 1.0


class Model(nn.Module):
    def __init__(self, num_features, margin):
        super().__init__()
        self.scorer = nn.Linear(num_features, 1)
        self.margin = margin

    def forward(self, x1, x2, y):
        s1 = self.scorer(x1).squeeze(-1)
        s2 = self.scorer(x2).squeeze(-1)
        return F.margin_ranking_loss(s1, s2, y, margin=self.margin)


def get_inputs():
    y = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [torch.randn(batch_size, num_features), torch.randn(batch_size, num_features), y]


def get_init_inputs():
    return [num_features, margin]

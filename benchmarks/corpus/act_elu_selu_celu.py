"""Exponential-linear family: F.elu (alpha 1.0), F.selu (self-normalizing MLP layer), F.celu (alpha 0.5), applied on a shared pre-activation; batch 2048, 2048 features."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
features = 2048


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(features, features)
        nn.init.kaiming_normal_(self.fc.weight, nonlinearity="linear")

    def forward(self, x):
        h = self.fc(x)
        return F.elu(h), F.selu(h), F.celu(h, alpha=0.5)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]

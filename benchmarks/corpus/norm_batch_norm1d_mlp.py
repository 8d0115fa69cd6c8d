"""Tabular/recsys MLP layer: Linear - BatchNorm1d (eval, non-trivial running stats) - ReLU, twice; batch 4096, 512 -> 1024 -> 256."""
import torch
import torch.nn as nn

batch_size = 4096
in_features = 512
hidden = 1024
out_features = 256


class Model(nn.Module):
    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, out_features)
        self.bn2 = nn.BatchNorm1d(out_features)
        with torch.no_grad():
            for bn in (self.bn1, self.bn2):
                bn.running_mean.normal_(0.0, 0.1)
                bn.running_var.uniform_(0.1, 1.0)

    def forward(self, x):
        x = torch.relu(self.bn1(self.fc1(x)))
        return torch.relu(self.bn2(self.fc2(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]

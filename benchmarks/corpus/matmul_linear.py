"""Single op: nn.Linear 4096 -> 4096 with bias over a batch of tokens (a LLaMA-7B projection); 1024 tokens."""
import torch
import torch.nn as nn

num_tokens = 1024
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(num_tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]

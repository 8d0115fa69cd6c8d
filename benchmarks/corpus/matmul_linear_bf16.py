"""bf16 linear: fp32 activations cast to bfloat16 inside forward, nn.Linear with bf16 weights (bias) 1024 -> 1024, bf16 output; 64 tokens."""
import torch
import torch.nn as nn

num_tokens = 64
in_features = 1024
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        return self.fc(x.to(torch.bfloat16))


def get_inputs():
    return [torch.randn(num_tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]

"""LoRA linear: frozen base W x + (alpha / r) * B(A x) with rank 16 adapters (A Kaiming, B small nonzero); 2048 tokens, 4096 -> 4096."""
import math

import torch
import torch.nn as nn

num_tokens = 2048
in_features = 4096
out_features = 4096
rank = 16
lora_alpha = 32


class Model(nn.Module):
    def __init__(self, in_features, out_features, rank, lora_alpha):
        super().__init__()
        self.base = nn.Linear(in_features, out_features, bias=False)
        self.lora_a = nn.Parameter(torch.empty(rank, in_features))
        nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
        self.lora_b = nn.Parameter(torch.randn(out_features, rank) * 0.01)
        self.scaling = lora_alpha / rank

    def forward(self, x):
        return self.base(x) + (x @ self.lora_a.t() @ self.lora_b.t()) * self.scaling


def get_inputs():
    return [torch.randn(num_tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features, rank, lora_alpha]

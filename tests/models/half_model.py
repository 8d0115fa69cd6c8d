"""An fp16 model: linear, softmax, layer norm, gelu in float16 (tolerances must follow the dtype)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 32).half()
        self.norm = nn.LayerNorm(32).half()

    def forward(self, x):
        h = self.fc(x)
        h = F.gelu(h) * 1.5 + x
        h = self.norm(h)
        return torch.softmax(h, dim=-1), h.sum(dim=-1)


def get_inputs():
    return [torch.randn(8, 32).half()]

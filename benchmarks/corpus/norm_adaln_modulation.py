"""DiT adaptive LayerNorm: conditioning -> SiLU -> Linear to (shift, scale, gate), LayerNorm without affine, x*(1+scale)+shift, gated residual MLP; batch 8, 256 tokens, d 1152."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_tokens = 256
d_model = 1152


class Model(nn.Module):
    def __init__(self, d_model):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, elementwise_affine=False, eps=1e-6)
        self.ada = nn.Linear(d_model, 3 * d_model)
        self.fc1 = nn.Linear(d_model, 4 * d_model)
        self.fc2 = nn.Linear(4 * d_model, d_model)

    def forward(self, x, c):
        shift, scale, gate = self.ada(F.silu(c)).chunk(3, dim=-1)
        h = self.norm(x) * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)
        h = self.fc2(F.gelu(self.fc1(h), approximate="tanh"))
        return x + gate.unsqueeze(1) * h


def get_inputs():
    return [torch.randn(batch_size, num_tokens, d_model), torch.randn(batch_size, d_model)]


def get_init_inputs():
    return [d_model]

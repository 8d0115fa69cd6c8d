"""Large benchmark model: a deep stack of 12 residual blocks (norm, linear, activations, layout), ~400 ops."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, i):
        super().__init__()
        self.i = i
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(d, d)
        self.mix = nn.Linear(d, d, bias=False)

    def forward(self, x):
        h = self.norm(x)
        a, b = self.fc1(h).chunk(2, dim=-1)
        act = (F.silu, F.gelu, torch.tanh, F.relu)[self.i % 4]
        h = act(a) * torch.sigmoid(b)
        h = self.fc2(h)
        t = h.transpose(-1, -2)
        t = torch.softmax(t, dim=-1) * t.shape[-1]
        h = t.transpose(-1, -2) * h
        m = self.mix(x).abs().clamp(min=1e-3).log() * 0.1
        s = (h + m - h.mean(dim=-1, keepdim=True)) / (h.std(dim=-1, keepdim=True) + 1.0)
        s = torch.where(s > 0, s, s * 0.5) + torch.neg(-s) * 0.25
        return x + s * 0.5


class Model(nn.Module):
    def __init__(self, d=32, depth=12):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d, i) for i in range(depth))
        self.out = nn.Linear(d, d)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.out(x).tanh(), x.sum(dim=1)


def get_inputs():
    return [torch.randn(4, 16, 32)]


def get_init_inputs():
    return [32, 12]

"""Medium benchmark model: two transformer-ish layers (attention + gated MLP, pre-norm, residuals) and a norm/activation tail, ~100 ops."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Layer(nn.Module):
    def __init__(self, d=32, heads=4, hidden=64):
        super().__init__()
        self.d, self.heads = d, heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.gate = nn.Linear(d, hidden)

    def attention(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // h)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)

    def mlp(self, x):
        a = F.gelu(self.fc1(x))
        g = torch.sigmoid(self.gate(x))
        return self.fc2(a * g)

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Model(nn.Module):
    def __init__(self, d=32, heads=4, hidden=64):
        super().__init__()
        self.layers = nn.ModuleList([Layer(d, heads, hidden), Layer(d, heads, hidden)])
        self.scale = nn.Parameter(torch.ones(d))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        y = x * self.scale
        y = y - y.mean(dim=-1, keepdim=True)
        y = y / (y.pow(2).mean(dim=-1, keepdim=True) + 1e-5).sqrt()
        z = torch.tanh(y) + torch.relu(-y) * 0.5
        z = z.transpose(0, 1).contiguous().transpose(0, 1)
        w = torch.abs(z).clamp(max=3.0) + torch.exp(-z.abs())
        return w.sum(dim=-1), z.max(dim=-1).values, torch.maximum(z, y).flatten(1)


def get_inputs():
    return [torch.randn(2, 8, 32)]


def get_init_inputs():
    return [32, 4, 64]

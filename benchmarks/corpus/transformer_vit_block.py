"""ViT-B/16 encoder block: pre-LN (eps 1e-6), SDPA multi-head attention, exact-GELU MLP x4, residuals; batch 8, 197 tokens, d 768, 12 heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_tokens = 197
d_model = 768
n_heads = 12
mlp_ratio = 4


class Model(nn.Module):
    def __init__(self, d_model, n_heads, mlp_ratio):
        super().__init__()
        self.n_heads = n_heads
        self.norm1 = nn.LayerNorm(d_model, eps=1e-6)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm2 = nn.LayerNorm(d_model, eps=1e-6)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def forward(self, x):
        b, n, c = x.shape
        h = self.norm1(x)
        q, k, v = self.qkv(h).reshape(b, n, 3, self.n_heads, c // self.n_heads).permute(2, 0, 3, 1, 4).unbind(0)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, c))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


def get_inputs():
    return [torch.randn(batch_size, num_tokens, d_model)]


def get_init_inputs():
    return [d_model, n_heads, mlp_ratio]

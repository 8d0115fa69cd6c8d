"""BERT-style attention with a key padding mask: per-sequence lengths -> additive float mask (0 or finfo.min) -> F.scaled_dot_product_attention; batch 8, seq 512, d 768, 12 heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
seq_len = 512
d_model = 768
n_heads = 12


class Model(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x, lengths):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4).unbind(0)
        positions = torch.arange(s, device=x.device)
        keep = positions[None, :] < lengths[:, None]  # (b, s) True where the key is a real token
        mask = torch.zeros(b, 1, 1, s, dtype=x.dtype, device=x.device)
        mask = mask.masked_fill(~keep[:, None, None, :], torch.finfo(x.dtype).min)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model), torch.randint(1, seq_len + 1, (batch_size,))]


def get_init_inputs():
    return [d_model, n_heads]

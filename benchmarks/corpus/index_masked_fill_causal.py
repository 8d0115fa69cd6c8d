"""masked_fill of attention scores with a causal (triu) mask and a key-padding mask, then softmax (the probabilities are returned); batch 4, 12 heads, seq 512."""
import torch
import torch.nn as nn

batch_size = 4
n_heads = 12
seq_len = 512


class Model(nn.Module):
    def forward(self, scores, lengths):
        s = scores.shape[-1]
        causal = torch.triu(torch.ones(s, s, dtype=torch.bool, device=scores.device), diagonal=1)
        pad = torch.arange(s, device=scores.device)[None, :] >= lengths[:, None]
        scores = scores.masked_fill(causal, float("-inf"))
        scores = scores.masked_fill(pad[:, None, None, :] & ~torch.eye(s, dtype=torch.bool, device=scores.device), -1e4)
        return torch.softmax(scores, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, n_heads, seq_len, seq_len) * 4.0, torch.randint(1, seq_len + 1, (batch_size,))]


def get_init_inputs():
    return []

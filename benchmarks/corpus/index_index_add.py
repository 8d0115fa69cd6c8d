"""torch.index_add (out of place) with alpha: accumulate token expert outputs back into their token slots (MoE combine) weighted by routing probabilities; 16384 tokens, top-2 routing, d 1024."""
import torch
import torch.nn as nn

num_tokens = 16384
top_k = 2
d_model = 1024


class Model(nn.Module):
    def forward(self, base, expert_out, token_idx, weights):
        weighted = expert_out * weights.unsqueeze(-1)
        return torch.index_add(base, 0, token_idx, weighted, alpha=0.5)


def get_inputs():
    token_idx = torch.arange(num_tokens).repeat_interleave(top_k)
    token_idx = token_idx[torch.randperm(token_idx.numel())]
    return [
        torch.randn(num_tokens, d_model),
        torch.randn(num_tokens * top_k, d_model),
        token_idx,
        torch.rand(num_tokens * top_k),
    ]


def get_init_inputs():
    return []

"""torch.take_along_dim with argsort indices (reorder per row by score, keep the 256 highest-scoring tokens, token pruning as in DynamicViT); batch 32, 1024 tokens, d 384."""
import torch
import torch.nn as nn

batch_size = 32
num_tokens = 1024
d_model = 384
keep = 256


class Model(nn.Module):
    def __init__(self, keep):
        super().__init__()
        self.keep = keep

    def forward(self, tokens, scores):
        order = torch.argsort(scores, dim=1, descending=True)[:, : self.keep]
        kept = torch.take_along_dim(tokens, order.unsqueeze(-1), dim=1)
        kept_scores = torch.take_along_dim(scores, order, dim=1)
        return kept * kept_scores.sigmoid().unsqueeze(-1)


def get_inputs():
    return [torch.randn(batch_size, num_tokens, d_model), torch.randn(batch_size, num_tokens)]


def get_init_inputs():
    return [keep]

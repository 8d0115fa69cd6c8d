"""DLRM sparse features: three nn.EmbeddingBag tables (sum / mean / max) over flattened indices with per-sample offsets, concatenated; batch 2048, 20 lookups per bag, tables 500k/100k/50k x 64."""
import torch
import torch.nn as nn

batch_size = 2048
bag_size = 20
table_rows = (500000, 100000, 50000)
embed_dim = 64


class Model(nn.Module):
    def __init__(self, rows0, rows1, rows2, embed_dim):
        super().__init__()
        self.bags = nn.ModuleList([
            nn.EmbeddingBag(rows0, embed_dim, mode="sum"),
            nn.EmbeddingBag(rows1, embed_dim, mode="mean"),
            nn.EmbeddingBag(rows2, embed_dim, mode="max"),
        ])

    def forward(self, idx0, idx1, idx2, offsets):
        return torch.cat([bag(i, offsets) for bag, i in zip(self.bags, (idx0, idx1, idx2))], dim=1)


def get_inputs():
    offsets = torch.arange(0, batch_size * bag_size, bag_size)
    return [torch.randint(0, n, (batch_size * bag_size,)) for n in table_rows] + [offsets]


def get_init_inputs():
    return [*table_rows, embed_dim]

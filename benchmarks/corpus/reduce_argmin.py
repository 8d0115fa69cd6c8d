"""Single op: torch.argmin over dim 1 (nearest-codebook index from a distance matrix, int64 output); 32768 vectors x 1024 codes."""
import torch
import torch.nn as nn

num_vectors = 32768
num_codes = 1024


class Model(nn.Module):
    def forward(self, distances):
        return torch.argmin(distances, dim=1)


def get_inputs():
    return [torch.rand(num_vectors, num_codes) * 10.0]


def get_init_inputs():
    return []

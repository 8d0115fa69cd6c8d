"""Single op: F.normalize (L2, eps 1e-12) of embedding rows; 65536 embeddings of dim 512."""
import torch
import torch.nn as nn
import torch.nn.functional as F

num_embeddings = 65536
dim = 512


class Model(nn.Module):
    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)


def get_inputs():
    return [torch.randn(num_embeddings, dim)]


def get_init_inputs():
    return []

"""Vector and matrix norms: L2 norm over the last dim, L1 norm, inf-norm, Frobenius norm of each matrix, and global grad-norm style sqrt(sum of squares); batch 64 x 512 x 512."""
import torch
import torch.nn as nn

batch_size = 64
rows = 512
cols = 512


class Model(nn.Module):
    def forward(self, x):
        l2 = torch.linalg.vector_norm(x, ord=2, dim=-1)
        l1 = x.norm(p=1, dim=-1)
        linf = torch.linalg.vector_norm(x, ord=float("inf"), dim=-1)
        fro = torch.linalg.matrix_norm(x, ord="fro")
        total = torch.sqrt((x * x).sum())
        return l2, l1 + linf, fro, total


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []

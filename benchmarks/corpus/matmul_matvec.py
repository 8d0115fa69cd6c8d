"""Matrix-vector products: torch.mv of a 8192 x 4096 matrix, torch.matmul batched (b, m, k) @ (b, k, 1), and a dot-product score per row via (x * w).sum; squeeze/unsqueeze around them."""
import torch
import torch.nn as nn

rows = 8192
cols = 4096
batch_size = 64
m = 1024
k = 512


class Model(nn.Module):
    def forward(self, mat, vec, bmat, bvec):
        y = torch.mv(mat, vec)
        by = torch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)
        dots = (mat[:, :k] * bvec[0]).sum(dim=-1)
        return y, by, dots


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(cols), torch.randn(batch_size, m, k), torch.randn(batch_size, k)]


def get_init_inputs():
    return []

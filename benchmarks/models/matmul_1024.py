"""Three chained 1024x1024 matmuls with relu between them (KernelBench style): valid at every integer dtype, where
eager has no BLAS; the sweep sizes such points by their cost (runners/checks/sweep_plan.py)."""
import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def forward(self, a, b, c, d):
        h = torch.relu(a @ b)
        h = torch.relu(h @ c)
        return h @ d


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N) / N ** 0.5, torch.randn(N, N) / N ** 0.5, torch.randn(N, N) / N ** 0.5]


def get_init_inputs():
    return []

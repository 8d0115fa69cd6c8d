"""KernelBench-style softmax at a real size: a 4096 x 65536 float32 input (2**28 elements, 1 GiB).
eqsat-test must test it at a test size without ever building it at this size."""
import torch
import torch.nn as nn

batch_size = 4096
dim = 65536


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

"""BatchNorm in training mode (F.batch_norm with running statistics): the running mean and variance are written."""
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.weight = torch.nn.Parameter(torch.rand(6) + 0.5)
        self.bias = torch.nn.Parameter(torch.randn(6))
        self.register_buffer("running_mean", torch.zeros(6))
        self.register_buffer("running_var", torch.ones(6))

    def forward(self, x):
        y = self.conv(x)
        y = F.batch_norm(y, self.running_mean, self.running_var, self.weight, self.bias, True, 0.1, 1e-5)
        return torch.relu_(y) + 1


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(2, 3, 6, 6)]

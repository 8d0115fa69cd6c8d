"""A forward that makes every tensor it uses itself: no inputs."""
import torch


class Model(torch.nn.Module):
    def forward(self):
        x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
        return torch.softmax(x * 0.25 - 2.0, dim=-1), x.cumsum(0)


def get_inputs():
    return []

"""Spatial transformer: small localization net predicts 2x3 affine theta (initialized near identity), F.affine_grid + F.grid_sample (bilinear, zeros padding) warp; batch 16, 3x224x224."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 3
image_size = 224


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.loc = nn.Sequential(
            nn.Conv2d(channels, 8, 7, stride=4), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(8 * 16, 6)
        )
        with torch.no_grad():
            self.loc[-1].weight.mul_(0.01)
            self.loc[-1].bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))

    def forward(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(x.shape), align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def get_inputs():
    return [torch.randn(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [channels]

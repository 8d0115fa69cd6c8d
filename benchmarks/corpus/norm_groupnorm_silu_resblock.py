"""Diffusion UNet ResBlock: GroupNorm(32)-SiLU-conv3x3, add projected time embedding, GroupNorm-SiLU-conv3x3, + skip; batch 4, 256 ch, 32x32, time emb 1024."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
channels = 256
height = 32
width = 32
temb_dim = 1024


class Model(nn.Module):
    def __init__(self, channels, temb_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, channels, eps=1e-6)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.temb_proj = nn.Linear(temb_dim, channels)
        self.norm2 = nn.GroupNorm(32, channels, eps=1e-6)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb_proj(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(batch_size, temb_dim)]


def get_init_inputs():
    return [channels, temb_dim]

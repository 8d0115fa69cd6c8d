"""ViT-B/16 input embedding: 16x16 stride-16 conv patchify, flatten to tokens, prepend class token, add learned position embedding; batch 16, 3x224x224 -> 197 x 768."""
import torch
import torch.nn as nn

batch_size = 16
image_size = 224
patch_size = 16
in_channels = 3
d_model = 768


class Model(nn.Module):
    def __init__(self, image_size, patch_size, in_channels, d_model):
        super().__init__()
        n_patches = (image_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_channels, d_model, patch_size, stride=patch_size)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d_model) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n_patches + 1, d_model) * 0.02)

    def forward(self, x):
        x = self.proj(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        return torch.cat([cls, x], dim=1) + self.pos_embed


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, in_channels, d_model]

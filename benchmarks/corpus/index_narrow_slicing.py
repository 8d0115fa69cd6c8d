"""Slicing and views: narrow, strided ::2 slices, negative-offset slices, chunk, split with sizes, unbind and cat back (space-to-depth + crops); batch 8, 64 ch, 224x224."""
import torch
import torch.nn as nn

batch_size = 8
channels = 64
height = 224
width = 224
crop = 192


class Model(nn.Module):
    def __init__(self, crop):
        super().__init__()
        self.crop = crop

    def forward(self, x):
        h, w = x.shape[-2:]
        top, left = (h - self.crop) // 2, (w - self.crop) // 2
        center = x.narrow(2, top, self.crop).narrow(3, left, self.crop)
        s2d = torch.cat([center[..., ::2, ::2], center[..., 1::2, ::2], center[..., ::2, 1::2], center[..., 1::2, 1::2]], dim=1)
        a, b = s2d.chunk(2, dim=1)
        p, q, r = torch.split(x[:, :, -16:, 8:-8], [16, 32, 16], dim=1)
        first, *_ = x[:, :4].unbind(1)
        return a - b, torch.cat([r, p, q], dim=1), first


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [crop]

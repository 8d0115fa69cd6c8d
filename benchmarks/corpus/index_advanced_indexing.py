"""Advanced (integer-tensor) indexing: pick per-sample class rows x[arange, labels], a 2-D broadcast index pair into a feature map, and a static-tensor column select; batch 1024, 1000 classes; feature map 16 x 256 x 64 x 64."""
import torch
import torch.nn as nn

batch_size = 1024
num_classes = 1000
fmap_batch = 16
fmap_channels = 256
fmap_size = 64
num_points = 512


class Model(nn.Module):
    def forward(self, logits, labels, fmap, ys, xs):
        rows = torch.arange(logits.shape[0], device=logits.device)
        picked = logits[rows, labels]  # (batch,)
        b = torch.arange(fmap.shape[0], device=fmap.device)[:, None]
        points = fmap[b, :, ys, xs]  # (fmap_batch, num_points, channels)
        cols = logits[:, labels[:16]]  # (batch, 16)
        return picked, points, cols


def get_inputs():
    return [
        torch.randn(batch_size, num_classes),
        torch.randint(0, num_classes, (batch_size,)),
        torch.randn(fmap_batch, fmap_channels, fmap_size, fmap_size),
        torch.randint(0, fmap_size, (fmap_batch, num_points)),
        torch.randint(0, fmap_size, (fmap_batch, num_points)),
    ]


def get_init_inputs():
    return []

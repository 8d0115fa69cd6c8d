"""Video/audio pooling: avg_pool3d 2x2x2 on a clip feature map and adaptive_max_pool1d + adaptive_avg_pool1d on a sequence; batch 4, 256 ch, 8x28x28 and 512 ch x 1000 steps."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
video_channels = 256
frames = 8
size = 28
audio_channels = 512
steps = 1000
pooled_steps = 64


class Model(nn.Module):
    def __init__(self, pooled_steps):
        super().__init__()
        self.pooled_steps = pooled_steps

    def forward(self, video, audio):
        v = F.avg_pool3d(video, kernel_size=2, stride=2)
        a = F.adaptive_max_pool1d(audio, self.pooled_steps) + F.adaptive_avg_pool1d(audio, self.pooled_steps)
        return v, a


def get_inputs():
    return [
        torch.randn(batch_size, video_channels, frames, size, size),
        torch.randn(batch_size, audio_channels, steps),
    ]


def get_init_inputs():
    return [pooled_steps]

"""wav2vec2-style audio feature encoder head: Conv1d k10 s5 - GroupNorm - GELU, then two Conv1d k3 s2 - GELU; batch 4, 1 s of 16 kHz audio, 512 ch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
num_samples = 16000
channels = 512


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv0 = nn.Conv1d(1, channels, 10, stride=5, bias=False)
        self.norm0 = nn.GroupNorm(channels, channels)
        self.conv1 = nn.Conv1d(channels, channels, 3, stride=2, bias=False)
        self.conv2 = nn.Conv1d(channels, channels, 3, stride=2, bias=False)

    def forward(self, wav):
        x = wav.unsqueeze(1)
        x = F.gelu(self.norm0(self.conv0(x)))
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        return x.transpose(1, 2)


def get_inputs():
    return [torch.randn(batch_size, num_samples)]


def get_init_inputs():
    return [channels]

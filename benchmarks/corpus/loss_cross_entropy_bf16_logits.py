"""Mixed-precision classifier loss: bf16 logits (half-precision input) upcast to fp32 inside forward, then cross-entropy with label smoothing 0.1; batch 512, 1000 classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 512
num_classes = 1000


class Model(nn.Module):
    def forward(self, logits_bf16, targets):
        return F.cross_entropy(logits_bf16.float(), targets, label_smoothing=0.1)


def get_inputs():
    return [
        (torch.randn(batch_size, num_classes) * 3.0).to(torch.bfloat16),
        torch.randint(0, num_classes, (batch_size,)),
    ]


def get_init_inputs():
    return []

"""Top-k: top-5 values and indices over ImageNet logits plus top-5 accuracy (compare with target, any, mean); batch 1024, 1000 classes."""
import torch
import torch.nn as nn

batch_size = 1024
num_classes = 1000
k = 5


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits, target):
        values, indices = torch.topk(logits, self.k, dim=-1)
        hit = (indices == target[:, None]).any(dim=-1)
        return values, indices, hit.float().mean()


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [k]

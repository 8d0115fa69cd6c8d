"""Multi-class SVM (Weston-Watkins) hinge loss written by hand: gather correct-class score, clamp(margin + s - s_y, 0), zero the true class, mean of row sums; batch 256, 1000 classes."""
import torch
import torch.nn as nn

batch_size = 256
num_classes = 1000
margin = 1.0


class Model(nn.Module):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def forward(self, scores, targets):
        correct = scores.gather(1, targets.unsqueeze(1))
        margins = torch.clamp(scores - correct + self.margin, min=0.0)
        not_true = torch.ones_like(margins).scatter(1, targets.unsqueeze(1), 0.0)
        return (margins * not_true).sum(dim=1).mean()


def get_inputs():
    return [torch.randn(batch_size, num_classes), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [margin]

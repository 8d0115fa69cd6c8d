"""Knowledge-distillation loss: KL(teacher || student) at temperature 4 via F.kl_div(log_softmax(s/T), softmax(t/T), batchmean) * T^2, plus hard-label CE; batch 256, 1000 classes."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
num_classes = 1000
temperature = 4.0
alpha = 0.9


class Model(nn.Module):
    def __init__(self, temperature, alpha):
        super().__init__()
        self.t = temperature
        self.alpha = alpha

    def forward(self, student_logits, teacher_logits, targets):
        soft = F.kl_div(
            F.log_softmax(student_logits / self.t, dim=-1),
            F.softmax(teacher_logits / self.t, dim=-1),
            reduction="batchmean",
        ) * (self.t * self.t)
        hard = F.cross_entropy(student_logits, targets)
        return self.alpha * soft + (1 - self.alpha) * hard


def get_inputs():
    return [
        torch.randn(batch_size, num_classes) * 3.0,
        torch.randn(batch_size, num_classes) * 3.0,
        torch.randint(0, num_classes, (batch_size,)),
    ]


def get_init_inputs():
    return [temperature, alpha]

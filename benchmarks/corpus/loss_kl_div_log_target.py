"""Single op: F.kl_div with log_target=True and reduction batchmean between two log-probability tensors (VAE/policy KL); batch 1024, 4096 categories."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
num_categories = 4096


class Model(nn.Module):
    def forward(self, log_p, log_q):
        return F.kl_div(log_p, log_q, reduction="batchmean", log_target=True)


def get_inputs():
    return [
        torch.log_softmax(torch.randn(batch_size, num_categories), dim=-1),
        torch.log_softmax(torch.randn(batch_size, num_categories), dim=-1),
    ]


def get_init_inputs():
    return []

"""CLIP contrastive head: linear projections, L2-normalize image and text embeddings, logits = exp(logit_scale) * img @ txt^T, symmetric cross-entropy; batch 1024, 768/512 -> 512."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
image_dim = 768
text_dim = 512
embed_dim = 512


class Model(nn.Module):
    def __init__(self, image_dim, text_dim, embed_dim):
        super().__init__()
        self.image_proj = nn.Linear(image_dim, embed_dim, bias=False)
        self.text_proj = nn.Linear(text_dim, embed_dim, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, image_features, text_features):
        img = F.normalize(self.image_proj(image_features), dim=-1)
        txt = F.normalize(self.text_proj(text_features), dim=-1)
        logits = self.logit_scale.exp() * img @ txt.t()
        labels = torch.arange(logits.shape[0], device=logits.device)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        return logits, loss


def get_inputs():
    return [torch.randn(batch_size, image_dim), torch.randn(batch_size, text_dim)]


def get_init_inputs():
    return [image_dim, text_dim, embed_dim]

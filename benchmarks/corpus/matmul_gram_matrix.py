"""Neural style transfer Gram matrices: flatten features, G = F F^T / (C H W) per image for several VGG layers, and the style MSE between two images; batch 4, 256 ch at 64x64 and 512 ch at 32x32."""
import torch
import torch.nn as nn

batch_size = 4
c1, s1 = 256, 64
c2, s2 = 512, 32


class Model(nn.Module):
    @staticmethod
    def gram(x):
        b, c, h, w = x.shape
        f = x.reshape(b, c, h * w)
        return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)

    def forward(self, a1, a2, t1, t2):
        g1, g2 = self.gram(a1), self.gram(a2)
        loss = ((g1 - self.gram(t1)) ** 2).mean() + ((g2 - self.gram(t2)) ** 2).mean()
        return g1, g2, loss


def get_inputs():
    return [
        torch.relu(torch.randn(batch_size, c1, s1, s1)),
        torch.relu(torch.randn(batch_size, c2, s2, s2)),
        torch.relu(torch.randn(batch_size, c1, s1, s1)),
        torch.relu(torch.randn(batch_size, c2, s2, s2)),
    ]


def get_init_inputs():
    return []

"""A list op that writes its inputs in place and reads one of them through a flipped view: _foreach_add_. It returns
a value computed before the writes: what it leaves in its inputs is what it does."""
import torch


class Model(torch.nn.Module):
    def forward(self, x, y):
        before = x.sum() + y.sum()
        torch._foreach_add_([x, y], [x.flip(0), y])
        return before


def get_inputs():
    torch.manual_seed(0)
    return [torch.randn(8), torch.randn(5)]

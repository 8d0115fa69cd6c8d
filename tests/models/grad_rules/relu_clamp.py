"""One rule whose sides differ in gradient at a tie: relu(x) has gradient 0 at x == 0, clamp(x, min=0) has 1."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule


@rule(family="activation", numerics="exact", grad="edge")
def grad_relu_is_clamp_min0(x: Tensor(dtype=FLOATING)):
    return torch.relu(x), torch.clamp(x, min=0)

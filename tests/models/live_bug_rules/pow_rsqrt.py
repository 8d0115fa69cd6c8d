"""The one rewrite that exposes tests/models/live_bug_pow_rsqrt.py's Inductor CPU bug (eager: bitwise exact)."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, Tensor, rule


@rule(family="spelling", numerics="exact", bidirectional=True)
def live_rsqrt_is_pow_neg_half(x: Tensor(dtype=FLOATING)):
    return torch.rsqrt(x), x ** -0.5

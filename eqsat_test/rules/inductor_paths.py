"""Fallback rules: flip a program between Inductor's own loops and a library kernel (extern or ATen fallback)."""
# Inductor lowers most ops to loops it writes itself, calls a library for others (extern_kernels.mm,
# bmm, addmm) and falls back to ATen for the rest (sort, topk, median, cumsum on CPU). An equivalent
# spelling on the other path exercises other code: a matmul as a broadcast product and a reduction,
# a running sum as a masked sum. These go one way, from the library call to Inductor's loops: the
# broadcast forms accept operands the library call refuses. Each rule names the kernel one side calls and the other does not in a
# `flips:K` tag, checked on the generated code (rewrite/patternreach.py).

import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import Tensor, rule

F32 = ("float32", "float64")


@rule(family="fallback", numerics="approximate", same_shape=False,
      tags=("flips:extern_kernels.mm",))
def mm_is_broadcast_product_sum(x: Tensor(shape=(3, 4), dtype=F32), y: Tensor(shape=(4, 5), dtype=F32)):
    return x @ y, (x.unsqueeze(-1) * y.unsqueeze(0)).sum(-2)


@rule(family="fallback", numerics="approximate", same_shape=False,
      tags=("flips:extern_kernels.bmm",))
def bmm_is_broadcast_product_sum(x: Tensor(shape=(2, 3, 4), dtype=F32), y: Tensor(shape=(2, 4, 5), dtype=F32)):
    return x @ y, (x.unsqueeze(-1) * y.unsqueeze(-3)).sum(-2)


@rule(family="fallback", numerics="approximate", same_shape=False,
      tags=("flips:extern_kernels.mm",))
def linear_no_bias_is_product_sum(x: Tensor(shape=(3, 4), dtype=F32), w: Tensor(shape=(5, 4), dtype=F32)):
    return F.linear(x, w), (x.unsqueeze(-2) * w).sum(-1)


@rule(family="fallback", numerics="approximate", same_shape=False,
      tags=("flips:extern_kernels.addmm",))
def linear_is_product_sum_plus_bias(x: Tensor(shape=(3, 4), dtype=F32), w: Tensor(shape=(5, 4), dtype=F32),
                                    b: Tensor(shape=(5,), dtype=F32)):
    return F.linear(x, w, b), (x.unsqueeze(-2) * w).sum(-1) + b


@rule(family="fallback", numerics="ieee-edge", tags=("flips:aten.median",))
def median_is_sorted_lower_half_max(x: Tensor(rank=(1, 2), dtype=F32)):
    """The lower median of a row is the largest of its (n + 1) // 2 smallest values; median is NaN
    wherever the row has a NaN, this form only where NaNs reach the lower half (sort puts them last)."""
    return x.median(-1).values, x.sort(-1).values.narrow(-1, 0, (x.shape[-1] + 1) // 2).amax(-1)


@rule(family="fallback", numerics="approximate", tags=("flips:aten.cumsum",))
def cumsum_is_triangular_product(x: Tensor(rank=(1, 2), dtype=F32)):
    """A running sum as a masked sum: row i of a lower-triangular mask of ones picks x[..., :i + 1]."""
    mask = torch.ones_like(x.unsqueeze(-1) * x.unsqueeze(-2)).tril()
    return x.cumsum(-1), (x.unsqueeze(-2) * mask).sum(-1)

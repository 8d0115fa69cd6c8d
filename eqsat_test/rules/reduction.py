"""Reduction rules: sum/mean/amax/amin/argmax/argmin/any/all/prod/std with dims and keepdim, nested and reordered reductions."""
import torch

from eqsat_test.rewrite.ruledsl import BOOL, FLOATING, NUMERIC, Scalar, Tensor, rule

DIM01 = Scalar(kind="int", values=(0, 1))


@rule(family="reduction", numerics="exact", bidirectional=True)
def sum_last_dim_rank2(x: Tensor(rank=2, dtype=NUMERIC)):
    return x.sum(-1), x.sum(1)


@rule(family="reduction", numerics="exact", bidirectional=True)
def sum_keepdim_is_unsqueeze(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM01):
    return x.sum(d, keepdim=True), x.sum(d).unsqueeze(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def sum_keepdim_squeezed(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM01):
    return x.sum(d, keepdim=True).squeeze(d), x.sum(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def mean_keepdim_is_unsqueeze(x: Tensor(rank=(2, 3), dtype=FLOATING), d: DIM01):
    return x.mean(d, keepdim=True), x.mean(d).unsqueeze(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def amax_keepdim_is_unsqueeze(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM01):
    return x.amax(d, keepdim=True), x.amax(d).unsqueeze(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def sum_all_is_sum_both_dims(x: Tensor(rank=2, dtype=NUMERIC)):
    return x.sum(), x.sum((0, 1))


@rule(family="reduction", numerics="approximate", bidirectional=True)
def sum_all_is_sum_of_flat(x: Tensor(rank=(2, 3), dtype=FLOATING)):
    """Not bitwise: a full sum runs in memory order, so a non-contiguous x sums in another order
    than its contiguous reshape."""
    return x.sum(), x.reshape(-1).sum(0)


@rule(family="reduction", numerics="exact", bidirectional=True)
def sum_all_is_sum_of_flat_int(x: Tensor(rank=(2, 3), dtype=("int32", "int64", "bool"))):
    return x.sum(), x.reshape(-1).sum(0)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def sum_all_is_nested_sum(x: Tensor(rank=2, dtype=FLOATING)):
    return x.sum(), x.sum(0).sum(0)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def nested_sums_reorder(x: Tensor(rank=3, dtype=FLOATING)):
    return x.sum(1).sum(0), x.sum(0).sum(0)


@rule(family="reduction", numerics="exact", bidirectional=True)
def nested_sums_int64(x: Tensor(rank=2, dtype="int64")):
    return x.sum(), x.sum(0).sum(0)


@rule(family="reduction", numerics="exact", bidirectional=True)
def mean_all_is_mean_both_dims(x: Tensor(rank=2, dtype=FLOATING)):
    return x.mean(), x.mean((0, 1))


@rule(family="reduction", numerics="approximate", bidirectional=True)
def mean_all_is_nested_mean(x: Tensor(rank=2, dtype=FLOATING)):
    return x.mean(), x.mean(0).mean(0)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def mean_is_sum_over_count(x: Tensor(rank=(1, 2, 3), dtype=FLOATING)):
    """The count is spelled shape-free, as the sum of a tensor of ones."""
    return x.mean(-1), x.sum(-1) / torch.ones_like(x).sum(-1)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def flipped_sum(x: Tensor(rank=(1, 2), dtype=FLOATING)):
    return x.flip(0).sum(0), x.sum(0)


@rule(family="reduction", numerics="ieee-edge", bidirectional=True)
def amax_is_max_values(x: Tensor(rank=(1, 2, 3), dtype=NUMERIC), d: DIM01):
    """amax and max(dim) may pick different zeros from a (+0.0, -0.0) tie."""
    return x.amax(d), x.max(d).values


@rule(family="reduction", numerics="ieee-edge", bidirectional=True)
def amin_is_min_values(x: Tensor(rank=(1, 2, 3), dtype=NUMERIC), d: DIM01):
    return x.amin(d), x.min(d).values


@rule(family="reduction", numerics="exact", bidirectional=True)
def argmax_is_max_indices(x: Tensor(rank=(1, 2, 3), dtype=NUMERIC), d: DIM01):
    return x.argmax(d), x.max(d).indices


@rule(family="reduction", numerics="ieee-edge", bidirectional=True)
def full_max_is_amax(x: Tensor(dtype=NUMERIC)):
    return x.max(), x.amax()


@rule(family="reduction", numerics="ieee-edge", bidirectional=True)
def full_min_is_amin(x: Tensor(dtype=NUMERIC)):
    return x.min(), x.amin()


@rule(family="reduction", numerics="exact", bidirectional=True)
def amin_is_neg_amax_neg(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), d: DIM01):
    return x.amin(d), -(-x).amax(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def argmin_is_argmax_neg(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), d: DIM01):
    return x.argmin(d), (-x).argmax(d)


@rule(family="reduction", numerics="ieee-edge", bidirectional=True)
def sum_of_neg_is_neg_sum(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), d: DIM01):
    return (-x).sum(d), -x.sum(d)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def sum_of_scaled_is_scaled_sum(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), d: DIM01,
                                s: Scalar(kind="float", values=(0.5, -2.0, 3.25))):
    return (x * s).sum(d), x.sum(d) * s


@rule(family="reduction", numerics="exact", bidirectional=True)
def any_is_not_all_not(x: Tensor(dtype=BOOL)):
    return x.any(), ~(~x).all()


@rule(family="reduction", numerics="exact", bidirectional=True)
def all_is_not_any_not(x: Tensor(dtype=BOOL)):
    return x.all(), ~(~x).any()


@rule(family="reduction", numerics="exact", bidirectional=True)
def any_dim_is_not_all_not(x: Tensor(rank=(1, 2, 3), dtype=BOOL), d: DIM01):
    return x.any(d), ~(~x).all(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def any_dim_is_sum_positive(x: Tensor(rank=(1, 2, 3), dtype=BOOL), d: DIM01):
    return x.any(d), x.sum(d) > 0


@rule(family="reduction", numerics="exact", bidirectional=True)
def any_dim_is_amax(x: Tensor(rank=(1, 2, 3), dtype=BOOL), d: DIM01):
    return x.any(d), x.amax(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def all_dim_is_amin(x: Tensor(rank=(1, 2, 3), dtype=BOOL), d: DIM01):
    return x.all(d), x.amin(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def count_nonzero_is_ne_sum(x: Tensor(rank=(1, 2, 3), dtype=NUMERIC), d: DIM01):
    return torch.count_nonzero(x, d), (x != 0).sum(d)


@rule(family="reduction", numerics="exact", bidirectional=True)
def bool_sum_is_count_nonzero(x: Tensor(rank=(1, 2, 3), dtype=BOOL), d: DIM01):
    return x.sum(d), torch.count_nonzero(x, d)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def logsumexp_is_log_sum_exp(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64", "bfloat16")), d: DIM01):
    """Not for float16: a sum of many exp values overflows float16 where logsumexp is finite."""
    return torch.logsumexp(x, d), torch.log(torch.exp(x).sum(d))


@rule(family="reduction", numerics="approximate", bidirectional=True)
def std_is_sqrt_var(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), d: DIM01):
    """Not bitwise even in float64: std takes its root inside the reduction kernel, before the
    result is rounded to the output dtype (and half-precision var can overflow where std does not)."""
    return x.std(d), x.var(d).sqrt()


@rule(family="reduction", numerics="exact", bidirectional=True)
def torch_var_is_method(x: Tensor(rank=(1, 2, 3), dtype=FLOATING), d: DIM01):
    return torch.var(x, d), x.var(d)


@rule(family="reduction", numerics="approximate", bidirectional=True)
def vector_norm_is_sqrt_sum_squares(x: Tensor(dtype=("float32", "float64", "bfloat16"))):
    """Not for float16: the sum of squares of a long tensor overflows float16 (65504), the norm
    (accumulated in float32) does not."""
    return torch.linalg.vector_norm(x), (x * x).sum().sqrt()


@rule(family="reduction", numerics="approximate", bidirectional=True)
def prod_of_exp_is_exp_of_sum(x: Tensor(rank=(1, 2), dtype=("float32", "float64")), d: DIM01):
    """Not for half precision: a product of many exp values overflows where exp(sum) does not."""
    return torch.exp(x).prod(d), torch.exp(x.sum(d))

"""Concatenation rules: cat/stack/split/chunk/unbind/repeat, cat of slices, stack as unsqueeze+cat, elementwise ops and reductions moved through cat."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, NUMERIC, Scalar, Tensor, rule

K12 = Scalar(kind="int", values=(1, 2))
DIM01 = Scalar(kind="int", values=(0, 1))


# Slice bounds are literals (the rule compiler cannot bind a Scalar inside a slice), so each split
# point gets its own rule.


@rule(family="concat", numerics="exact")
def cat_of_column_slices_at1(x: Tensor(rank=2)):
    return torch.cat([x[:, :1], x[:, 1:]], 1), x


@rule(family="concat", numerics="exact")
def cat_of_column_slices_at2(x: Tensor(rank=2)):
    return torch.cat([x[:, :2], x[:, 2:]], 1), x


@rule(family="concat", numerics="exact")
def cat_of_row_slices_at1(x: Tensor(rank=(1, 2, 3))):
    return torch.cat([x[:1], x[1:]], 0), x


@rule(family="concat", numerics="exact")
def cat_of_row_slices_at2(x: Tensor(rank=(1, 2, 3))):
    return torch.cat([x[:2], x[2:]], 0), x


@rule(family="concat", numerics="exact")
def cat_of_row_slices_default_dim(x: Tensor(rank=(1, 2, 3))):
    return torch.cat([x[:1], x[1:]]), x


@rule(family="concat", numerics="exact")
def cat_of_last_dim_slices(x: Tensor(rank=(1, 2, 3))):
    return torch.cat([x[..., :1], x[..., 1:]], -1), x


@rule(family="concat", numerics="exact")
def cat_of_three_row_slices(x: Tensor(rank=(1, 2))):
    return torch.cat([x[:1], x[1:2], x[2:]], 0), x


@rule(family="concat", numerics="exact")
def cat_of_one(x: Tensor(rank=(1, 2, 3)), d: Scalar(kind="int", values=(0, -1))):
    return torch.cat([x], d), x


@rule(family="concat", numerics="exact")
def cat_of_chunks(x: Tensor(rank=(2, 3), min_size=2), d: DIM01):
    """chunk(2) of an extent >= 2 always gives exactly two pieces, so the pattern's two getitems
    cover the whole tensor. (There is no such rule for split(k) or unbind: their number of pieces
    depends on the extent, and a pattern would match a cat of only some of them.)"""
    return torch.cat(x.chunk(2, d), d), x


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def cat_dim_keyword(x: Tensor(rank=(1, 2)), y: Tensor(rank=(1, 2))):
    return torch.cat([x, y], dim=0), torch.cat([x, y], 0)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def cat_is_concat(x: Tensor(rank=(1, 2)), y: Tensor(rank=(1, 2))):
    return torch.cat([x, y], 0), torch.concat([x, y], 0)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def cat_is_concatenate(x: Tensor(rank=(1, 2)), y: Tensor(rank=(1, 2))):
    return torch.cat([x, y], 0), torch.concatenate([x, y], 0)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def cat_last_dim_rank2(x: Tensor(rank=2), y: Tensor(rank=2)):
    return torch.cat([x, y], -1), torch.cat([x, y], 1)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def vstack_is_cat0(x: Tensor(rank=2), y: Tensor(rank=2)):
    return torch.vstack([x, y]), torch.cat([x, y], 0)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def hstack_is_cat1(x: Tensor(rank=2), y: Tensor(rank=2)):
    return torch.hstack([x, y]), torch.cat([x, y], 1)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def stack_is_unsqueeze_cat(x: Tensor(rank=(1, 2)), y: Tensor(rank=(1, 2)), d: DIM01):
    return torch.stack([x, y], d), torch.cat([x.unsqueeze(d), y.unsqueeze(d)], d)


# (one way, from the expand: a stack is contiguous, an expand is not, and a program's `.view` of
# the stack would fail on the expand)
@rule(family="concat", numerics="exact")
def stack_self_is_expand_rank1(x: Tensor(rank=1)):
    return x.unsqueeze(0).expand(2, -1), torch.stack([x, x], 0)


@rule(family="concat", numerics="exact")
def stack_self_is_expand_rank2(x: Tensor(rank=2)):
    return x.unsqueeze(0).expand(2, -1, -1), torch.stack([x, x], 0)


@rule(family="concat", numerics="exact", bidirectional=True)
def repeat_rows_is_cat(x: Tensor(rank=2)):
    return x.repeat(2, 1), torch.cat([x, x], 0)


@rule(family="concat", numerics="exact", bidirectional=True)
def repeat_cols_is_cat(x: Tensor(rank=2)):
    return x.repeat(1, 2), torch.cat([x, x], 1)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def cat_transposed(x: Tensor(rank=2), y: Tensor(rank=2)):
    return torch.cat([x, y], 0).t(), torch.cat([x.t(), y.t()], 1)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def relu_through_cat(x: Tensor(rank=(1, 2), dtype=NUMERIC), y: Tensor(rank=(1, 2), dtype=NUMERIC),
                     d: DIM01):
    return torch.relu(torch.cat([x, y], d)), torch.cat([torch.relu(x), torch.relu(y)], d)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def neg_through_cat(x: Tensor(rank=(1, 2), dtype=FLOATING), y: Tensor(rank=(1, 2), dtype=FLOATING)):
    return -torch.cat([x, y], 0), torch.cat([-x, -y], 0)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def abs_through_cat(x: Tensor(rank=(1, 2), dtype=FLOATING), y: Tensor(rank=(1, 2), dtype=FLOATING)):
    return torch.abs(torch.cat([x, y], 0)), torch.cat([torch.abs(x), torch.abs(y)], 0)


@rule(family="concat", numerics="exact", bidirectional=True, same_shape=False)
def exp_through_cat(x: Tensor(rank=(1, 2), dtype="float32"), y: Tensor(rank=(1, 2), dtype="float32")):
    """float32 only: with mixed dtypes cat promotes first, so exp runs at another precision."""
    return torch.exp(torch.cat([x, y], 0)), torch.cat([torch.exp(x), torch.exp(y)], 0)


@rule(family="concat", numerics="approximate", same_shape=False)
def sum_of_cat_columns(x: Tensor(rank=2, dtype=FLOATING), y: Tensor(rank=2, dtype=FLOATING)):
    return torch.cat([x, y], 1).sum(1), x.sum(1) + y.sum(1)


@rule(family="concat", numerics="approximate", same_shape=False)
def sum_of_cat_rows(x: Tensor(rank=2, dtype=FLOATING), y: Tensor(rank=2, dtype=FLOATING)):
    return torch.cat([x, y], 0).sum(0), x.sum(0) + y.sum(0)


@rule(family="concat", numerics="ieee-edge", same_shape=False)
def amax_of_cat_rows(x: Tensor(rank=2, dtype=FLOATING), y: Tensor(rank=2, dtype=FLOATING)):
    """ieee-edge: amax and maximum break ties between +0.0 and -0.0 differently in their vector
    bodies and tails (and where threads split the work), so the sign of a zero max can flip."""
    return torch.cat([x, y], 0).amax(0), torch.maximum(x.amax(0), y.amax(0))


@rule(family="concat", numerics="ieee-edge", same_shape=False)
def stack_sum_is_add(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """One way only: stack wants equal shapes, + broadcasts."""
    return torch.stack([x, y], 0).sum(0), x + y


@rule(family="concat", numerics="ieee-edge", same_shape=False)
def stack_amax_is_maximum(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """One way only: stack wants equal shapes, maximum broadcasts. amax and maximum break a
    (+0.0, -0.0) tie differently."""
    return torch.stack([x, y], 0).amax(0), torch.maximum(x, y)


@rule(family="concat", numerics="exact", bidirectional=True)
def split_first_is_slice(x: Tensor(rank=(1, 2, 3))):
    return torch.split(x, 2, 0)[0], x[:2]


@rule(family="concat", numerics="exact", bidirectional=True)
def split_dim1_first_is_slice(x: Tensor(rank=(2, 3))):
    return torch.split(x, 2, dim=1)[0], x[:, :2]


# Rule sides must be tensors (not tuples): spellings of tuple-valued ops are written on a piece.


@rule(family="concat", numerics="exact", bidirectional=True)
def split_method_is_function(x: Tensor(rank=(1, 2, 3)), k: K12):
    return x.split(k, 0)[0], torch.split(x, k, 0)[0]


@rule(family="concat", numerics="exact", bidirectional=True)
def chunk_method_is_function(x: Tensor(rank=(1, 2, 3)), d: DIM01):
    return x.chunk(2, d)[0], torch.chunk(x, 2, d)[0]


@rule(family="concat", numerics="exact", bidirectional=True)
def unbind_first_is_index(x: Tensor(rank=(1, 2, 3))):
    return x.unbind(0)[0], x[0]


@rule(family="concat", numerics="exact", bidirectional=True)
def torch_unbind_is_method(x: Tensor(rank=(2, 3))):
    return torch.unbind(x, 0)[0], x.unbind(0)[0]


"""Layout detours: the same values in another layout (a transposed copy, channels-last) around reductions, matmuls and softmax."""
# Inductor chooses loop orders, tiling and library calls by the strides it is given; a copy in a
# transposed layout, turned back by a view, holds the same values with other strides, so the
# reduction or the matmul that reads it takes another path. No as_strided: only transposes,
# permutes and contiguous copies, whose meaning does not depend on the input's own strides.

import torch

from eqsat_test.rewrite.ruledsl import FLOATING, NUMERIC, Scalar, Tensor, rule

DIM = Scalar(kind="int", values=(0, 1, -1))
F32 = ("float32", "float64")


@rule(family="layout", numerics="approximate", bidirectional=True)
def sum_of_transposed_copy(x: Tensor(rank=(2, 3), dtype=FLOATING), d: DIM):
    return x.sum(d), x.transpose(0, 1).contiguous().transpose(0, 1).sum(d)


@rule(family="layout", numerics="exact", bidirectional=True)
def sum_of_transposed_copy_int(x: Tensor(rank=(2, 3), dtype=("int32", "int64")), d: DIM):
    return x.sum(d), x.transpose(0, 1).contiguous().transpose(0, 1).sum(d)


@rule(family="layout", numerics="ieee-edge", bidirectional=True)
def amax_of_transposed_copy(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM):
    return x.amax(d), x.transpose(0, 1).contiguous().transpose(0, 1).amax(d)


@rule(family="layout", numerics="approximate", bidirectional=True)
def mean_of_transposed_copy(x: Tensor(rank=(2, 3), dtype=FLOATING), d: DIM):
    return x.mean(d), x.transpose(0, 1).contiguous().transpose(0, 1).mean(d)


@rule(family="layout", numerics="exact", bidirectional=True)
def argmax_of_transposed_copy(x: Tensor(rank=(2, 3), dtype=NUMERIC), d: DIM):
    return x.argmax(d), x.transpose(0, 1).contiguous().transpose(0, 1).argmax(d)


@rule(family="layout", numerics="approximate", bidirectional=True)
def softmax_of_transposed_copy(x: Tensor(rank=(2, 3), dtype=FLOATING), d: DIM):
    return torch.softmax(x, d), torch.softmax(x.transpose(0, 1).contiguous().transpose(0, 1), d)


@rule(family="layout", numerics="approximate", bidirectional=True)
def sum_of_channels_last_copy(x: Tensor(rank=4, dtype=FLOATING), d: DIM):
    return x.sum(d), x.contiguous(memory_format=torch.channels_last).sum(d)


@rule(family="layout", numerics="approximate", bidirectional=True, same_shape=False)
def matmul_of_column_major_lhs(x: Tensor(shape=(3, 4), dtype=F32), y: Tensor(shape=(4, 5), dtype=F32)):
    return x @ y, x.t().contiguous().t() @ y


@rule(family="layout", numerics="approximate", bidirectional=True, same_shape=False)
def matmul_of_column_major_rhs(x: Tensor(shape=(3, 4), dtype=F32), y: Tensor(shape=(4, 5), dtype=F32)):
    return x @ y, x @ y.t().contiguous().t()


@rule(family="layout", numerics="approximate", bidirectional=True, same_shape=False)
def batched_matmul_of_transposed_copy(x: Tensor(shape=(2, 3, 4), dtype=F32), y: Tensor(shape=(2, 4, 5), dtype=F32)):
    return x @ y, x.transpose(-2, -1).contiguous().transpose(-2, -1) @ y


@rule(family="layout", numerics="approximate", bidirectional=True, same_shape=False)
def conv2d_of_channels_last_input(x: Tensor(shape=(2, 3, 6, 6), dtype=F32), w: Tensor(shape=(4, 3, 3, 3), dtype=F32)):
    return (torch.nn.functional.conv2d(x, w),
            torch.nn.functional.conv2d(x.contiguous(memory_format=torch.channels_last), w))


@rule(family="layout", numerics="exact", bidirectional=True)
def argmax_of_transpose_rank3(x: Tensor(rank=3, dtype=NUMERIC)):
    """A transpose moved before an argmax: the reduced dimension follows it."""
    return x.argmax(-1), x.transpose(1, 2).argmax(1)


@rule(family="layout", numerics="exact", bidirectional=True)
def argmin_of_transpose_rank3(x: Tensor(rank=3, dtype=NUMERIC)):
    return x.argmin(-1), x.transpose(1, 2).argmin(1)

"""Layout rules: transpose/permute/reshape/view/flatten/unsqueeze/flip identities, and layout ops moved through elementwise ops and reductions."""
import torch

from eqsat_test.rewrite.ruledsl import FLOATING, NUMERIC, Scalar, Tensor, rule

# ---- involutions and spellings of transpose / permute ------------------------------------------


@rule(family="layout", numerics="exact")
def double_transpose(x: Tensor(rank=2)):
    return x.t().t(), x


@rule(family="layout", numerics="exact", bidirectional=True)
def t_is_transpose01(x: Tensor(rank=2)):
    return x.t(), x.transpose(0, 1)


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_t_is_method(x: Tensor(rank=(1, 2))):
    return torch.t(x), x.t()


@rule(family="layout", numerics="exact", bidirectional=True)
def t_is_permute10(x: Tensor(rank=2)):
    return x.t(), x.permute(1, 0)


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose01_is_transpose10(x: Tensor(rank=(2, 3, 4))):
    return x.transpose(0, 1), x.transpose(1, 0)


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_last_two_order(x: Tensor(rank=(2, 3, 4))):
    return x.transpose(-1, -2), x.transpose(-2, -1)


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_transpose_is_method(x: Tensor(rank=(2, 3, 4))):
    return torch.transpose(x, 0, 1), x.transpose(0, 1)


@rule(family="layout", numerics="exact", bidirectional=True)
def swapaxes_is_transpose(x: Tensor(rank=(2, 3, 4))):
    return x.swapaxes(0, 1), x.transpose(0, 1)


@rule(family="layout", numerics="exact", bidirectional=True)
def movedim_is_transpose_rank2(x: Tensor(rank=2)):
    return x.movedim(0, 1), x.transpose(0, 1)


@rule(family="layout", numerics="exact", bidirectional=True)
def movedim_is_permute_rank3(x: Tensor(rank=3)):
    return x.movedim(0, -1), x.permute(1, 2, 0)


@rule(family="layout", numerics="exact")
def transpose_involution(x: Tensor(rank=(3, 4)), a: Scalar(kind="int", values=(0, 1)),
                         b: Scalar(kind="int", values=(1, 2))):
    return x.transpose(a, b).transpose(a, b), x


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_permute_is_method(x: Tensor(rank=3)):
    return torch.permute(x, (2, 0, 1)), x.permute(2, 0, 1)


@rule(family="layout", numerics="exact")
def permute_then_inverse_rank3(x: Tensor(rank=3)):
    return x.permute(1, 2, 0).permute(2, 0, 1), x


@rule(family="layout", numerics="exact")
def permute021_involution(x: Tensor(rank=3)):
    return x.permute(0, 2, 1).permute(0, 2, 1), x


@rule(family="layout", numerics="exact", bidirectional=True)
def permute021_is_transpose12(x: Tensor(rank=3)):
    return x.permute(0, 2, 1), x.transpose(1, 2)


@rule(family="layout", numerics="exact", bidirectional=True)
def permute_composition_rank3(x: Tensor(rank=3)):
    return x.permute(1, 0, 2).permute(0, 2, 1), x.permute(1, 2, 0)


@rule(family="layout", numerics="exact", bidirectional=True)
def two_transposes_are_permute_rank3(x: Tensor(rank=3)):
    return x.transpose(0, 1).transpose(1, 2), x.permute(1, 2, 0)


# ---- unsqueeze / squeeze / flatten / reshape / view --------------------------------------------


@rule(family="layout", numerics="exact")
def unsqueeze_then_squeeze(x: Tensor(rank=(1, 2, 3)), d: Scalar(kind="int", values=(0, 1, -1))):
    return x.unsqueeze(d).squeeze(d), x


@rule(family="layout", numerics="exact", bidirectional=True)
def unsqueeze0_is_none_index(x: Tensor(rank=(1, 2, 3))):
    return x.unsqueeze(0), x[None]


@rule(family="layout", numerics="exact", bidirectional=True)
def unsqueeze_last_is_ellipsis_none(x: Tensor(rank=(1, 2, 3))):
    return x.unsqueeze(-1), x[..., None]


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_unsqueeze_is_method(x: Tensor(rank=(1, 2, 3)), d: Scalar(kind="int", values=(0, 1, -1))):
    return torch.unsqueeze(x, d), x.unsqueeze(d)


@rule(family="layout", numerics="exact", bidirectional=True)
def flatten_is_reshape_minus1(x: Tensor(rank=(2, 3, 4))):
    """Rank 2+ only: Dynamo drops flatten() of a rank-1 tensor from the graph."""
    return x.flatten(), x.reshape(-1)


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_flatten_is_method(x: Tensor(rank=(2, 3, 4))):
    return torch.flatten(x), x.flatten()


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_reshape_is_method(x: Tensor(rank=(1, 2, 3, 4))):
    return torch.reshape(x, (-1,)), x.reshape(-1)


@rule(family="layout", numerics="exact")
def view_minus1_to_reshape(x: Tensor(rank=(1, 2, 3, 4))):
    """One way only: view raises on non-contiguous inputs where reshape copies."""
    return x.view(-1), x.reshape(-1)


@rule(family="layout", numerics="exact")
def reshape_minus1_idempotent(x: Tensor(rank=(1, 2, 3, 4))):
    return x.reshape(-1).reshape(-1), x.reshape(-1)


@rule(family="layout", numerics="exact", bidirectional=True)
def flatten01_rank2_is_flatten(x: Tensor(rank=2)):
    return x.flatten(0, 1), x.flatten()


@rule(family="layout", numerics="exact", bidirectional=True)
def flatten_from1_rank3(x: Tensor(rank=3)):
    return x.flatten(1, 2), x.flatten(1)


@rule(family="layout", numerics="exact")
def expand_as_self(x: Tensor()):
    return x.expand_as(x), x


# ---- flip --------------------------------------------------------------------------------------


@rule(family="layout", numerics="exact")
def flip_involution(x: Tensor(rank=(1, 2, 3)), d: Scalar(kind="int", values=(0, -1))):
    return x.flip(d).flip(d), x


@rule(family="layout", numerics="exact", bidirectional=True)
def torch_flip_is_method(x: Tensor(rank=(1, 2, 3))):
    return torch.flip(x, (0,)), x.flip(0)


@rule(family="layout", numerics="exact", bidirectional=True)
def flip_two_dims_is_two_flips(x: Tensor(rank=2)):
    return x.flip(0).flip(1), x.flip(0, 1)


# ---- transpose moved through elementwise ops (rank 2; broadcasting within rank 2 commutes) -----


@rule(family="layout", numerics="exact", bidirectional=True, same_shape=False)
def transpose_through_add(x: Tensor(rank=2), y: Tensor(rank=2)):
    return x.t() + y.t(), (x + y).t()


@rule(family="layout", numerics="exact", bidirectional=True, same_shape=False)
def transpose_through_sub(x: Tensor(rank=2, dtype=NUMERIC), y: Tensor(rank=2, dtype=NUMERIC)):
    return x.t() - y.t(), (x - y).t()


@rule(family="layout", numerics="exact", bidirectional=True, same_shape=False)
def transpose_through_mul(x: Tensor(rank=2), y: Tensor(rank=2)):
    return x.t() * y.t(), (x * y).t()


@rule(family="layout", numerics="exact", bidirectional=True, same_shape=False)
def transpose_through_div(x: Tensor(rank=2, dtype=FLOATING), y: Tensor(rank=2, dtype=FLOATING)):
    return x.t() / y.t(), (x / y).t()


@rule(family="layout", numerics="exact", bidirectional=True, same_shape=False)
def transpose_through_maximum(x: Tensor(rank=2, dtype=NUMERIC), y: Tensor(rank=2, dtype=NUMERIC)):
    return torch.maximum(x.t(), y.t()), torch.maximum(x, y).t()


@rule(family="layout", numerics="exact", bidirectional=True, same_shape=False)
def transpose_through_where(c: Tensor(rank=2, dtype="bool"), x: Tensor(rank=2), y: Tensor(rank=2)):
    return torch.where(c.t(), x.t(), y.t()), torch.where(c, x, y).t()


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_through_relu(x: Tensor(rank=2, dtype=NUMERIC)):
    return torch.relu(x.t()), torch.relu(x).t()


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_through_neg(x: Tensor(rank=2, dtype=NUMERIC)):
    return -(x.t()), (-x).t()


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_through_exp(x: Tensor(rank=2, dtype=FLOATING)):
    return torch.exp(x.t()), torch.exp(x).t()


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_through_sigmoid(x: Tensor(rank=2, dtype=FLOATING)):
    return torch.sigmoid(x.t()), torch.sigmoid(x).t()


@rule(family="layout", numerics="exact", bidirectional=True)
def transpose_through_tanh(x: Tensor(rank=2, dtype=FLOATING)):
    return torch.tanh(x.t()), torch.tanh(x).t()


@rule(family="layout", numerics="exact", bidirectional=True)
def permute_through_abs(x: Tensor(rank=3, dtype=NUMERIC)):
    return torch.abs(x.permute(2, 0, 1)), torch.abs(x).permute(2, 0, 1)


@rule(family="layout", numerics="exact", bidirectional=True)
def unsqueeze_through_exp(x: Tensor(rank=(1, 2, 3), dtype=FLOATING)):
    return torch.exp(x.unsqueeze(0)), torch.exp(x).unsqueeze(0)


@rule(family="layout", numerics="exact", bidirectional=True)
def reshape_through_relu(x: Tensor(rank=(1, 2, 3, 4), dtype=NUMERIC)):
    return torch.relu(x.reshape(-1)), torch.relu(x).reshape(-1)


@rule(family="layout", numerics="exact", bidirectional=True)
def flatten_through_mul_scalar(x: Tensor(rank=(2, 3), dtype=FLOATING), s: Scalar(kind="float")):
    return x.flatten() * s, (x * s).flatten()


# ---- transpose moved through reductions (rank 2) -----------------------------------------------


@rule(family="layout", numerics="exact", bidirectional=True)
def transposed_sum0_is_sum1(x: Tensor(rank=2, dtype=NUMERIC)):
    return x.t().sum(0), x.sum(1)


@rule(family="layout", numerics="exact", bidirectional=True)
def transposed_sum1_is_sum0(x: Tensor(rank=2, dtype=NUMERIC)):
    return x.t().sum(1), x.sum(0)


@rule(family="layout", numerics="exact", bidirectional=True)
def transposed_amax0_is_amax1(x: Tensor(rank=2, dtype=NUMERIC)):
    return x.t().amax(0), x.amax(1)


@rule(family="layout", numerics="exact", bidirectional=True)
def transposed_argmax0_is_argmax1(x: Tensor(rank=2, dtype=NUMERIC)):
    return x.t().argmax(0), x.argmax(1)


@rule(family="layout", numerics="exact", bidirectional=True)
def transposed_any0_is_any1(x: Tensor(rank=2, dtype="bool")):
    return x.t().any(0), x.any(1)


@rule(family="layout", numerics="exact", bidirectional=True)
def select_is_index(x: Tensor(rank=(1, 2, 3))):
    return x.select(0, 0), x[0]


@rule(family="layout", numerics="exact", bidirectional=True)
def select_dim1_is_index(x: Tensor(rank=(2, 3))):
    return x.select(1, 0), x[:, 0]


@rule(family="layout", numerics="exact")
def narrow_is_slice(x: Tensor(rank=(1, 2, 3))):
    """One way only: narrow raises when 2 exceeds the extent, slicing clips. (Slice bounds are
    literals: the rule compiler cannot bind a Scalar inside a slice.)"""
    return x.narrow(0, 0, 2), x[:2]


"""Decompositions of losses, indexing and masking forms and more corpus ops into primitive ops, both ways where it makes sense."""

import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, make_rule, rule
from eqsat_test.rules._decompose import DIM, EPS, F32_64, FAM, T, per_dtype  # noqa: F401

# ---- losses --------------------------------------------------------------------------------------


# Losses of two tensors: one rule per dtype (a loss keeps its input's dtype where the arithmetic
# of mixed dtypes promotes); the shapes may broadcast (the losses warn and broadcast too).
_XY = {"x": Tensor(), "y": Tensor()}
BETA = Scalar(kind="float", values=(1.0, 0.1111111111111111, 0.5))


def _mse(x, y):
    return F.mse_loss(x, y), ((x - y) ** 2).mean()


def _mse_sum(x, y):
    return F.mse_loss(x, y, reduction="sum"), ((x - y) ** 2).sum()


def _l1(x, y):
    return F.l1_loss(x, y), (x - y).abs().mean()


def _l1_sum(x, y):
    return F.l1_loss(x, y, reduction="sum"), (x - y).abs().sum()


def _smooth_l1_sum(x, y, beta):
    d = (x - y).abs()
    return (F.smooth_l1_loss(x, y, beta=beta, reduction="sum"),
            torch.where(d < beta, 0.5 * d * d / beta, (2 * d - beta) * 0.5).sum())


def _smooth_l1(x, y):
    d = (x - y).abs()
    return F.smooth_l1_loss(x, y), torch.where(d < 1.0, 0.5 * d * d, d - 0.5).mean()


def _huber(x, y, delta):
    d = (x - y).abs()
    return (F.huber_loss(x, y, reduction="none", delta=delta),
            torch.where(d < delta, 0.5 * d * d, (2 * d - delta) * delta * 0.5))


def _bce_logits_none(x, y):
    return F.binary_cross_entropy_with_logits(x, y, reduction="none"), (1 - y) * x + F.softplus(-x)


def _bce_logits(x, y):
    return F.binary_cross_entropy_with_logits(x, y), ((1 - y) * x + F.softplus(-x)).mean()


def _margin_ranking(a, b, y, m):
    return F.margin_ranking_loss(a, b, y, margin=m), (-y * (a - b) + m).clamp_min(0).mean()


per_dtype("mse_loss_is_mean_square", _mse, _XY, same_shape=False)
per_dtype("mse_loss_sum_is_sum_square", _mse_sum, _XY, same_shape=False)
per_dtype("l1_loss_is_mean_abs", _l1, _XY, same_shape=False)
per_dtype("l1_loss_sum_is_sum_abs", _l1_sum, _XY, same_shape=False)
per_dtype("smooth_l1_loss_sum_is_where", _smooth_l1_sum, {**_XY, "beta": BETA}, same_shape=False)
per_dtype("smooth_l1_loss_is_where_mean", _smooth_l1, _XY, same_shape=False)
per_dtype("huber_loss_none_is_where", _huber, {**_XY, "delta": BETA}, same_shape=False)
# (one way: these losses insist on equal shapes, their formulas broadcast)
per_dtype("bce_with_logits_none_is_softplus_form", _bce_logits_none, _XY, bidirectional=False)
per_dtype("bce_with_logits_is_mean_softplus_form", _bce_logits, _XY, bidirectional=False)
per_dtype("margin_ranking_loss_is_clamp_mean", _margin_ranking,
          {"a": Tensor(), "b": Tensor(), "y": Tensor(), "m": Scalar(kind="float", values=(1.0, 0.0, 0.5))},
          numerics="exact", bidirectional=False)


def _bce_pos_weight(x, y, pw):
    lw = (pw - 1) * y + 1
    return (F.binary_cross_entropy_with_logits(x, y, None, pos_weight=pw, reduction="mean"),
            ((1 - y) * x + lw * (torch.log1p(torch.exp(-x.abs())) + torch.clamp(-x, min=0))).mean())


per_dtype("bce_with_logits_pos_weight_is_formula", _bce_pos_weight,
          {"x": T(3, 4), "y": T(3, 4), "pw": T(4)}, bidirectional=False)


@rule(family=FAM, numerics="approximate")
def bce_of_sigmoid_is_clamped_logs(x: Tensor(dtype=("float32", "float64")), y: Tensor(dtype=("float32", "float64"))):
    p = torch.sigmoid(x)
    return (F.binary_cross_entropy(p, y),
            -(y * torch.clamp(torch.log(p), min=-100) + (1 - y) * torch.clamp(torch.log(1 - p), min=-100)).mean())


@rule(family=FAM, numerics="exact", bidirectional=True)
def kl_div_batchmean_is_xlogy_sum(x: Tensor(rank=2, dtype=("float32", "float64")),
                                  y: Tensor(rank=2, dtype=("float32", "float64"))):
    return F.kl_div(x, y, reduction="batchmean"), (torch.xlogy(y, y) - y * x).sum() / x.shape[0]


@rule(family=FAM, numerics="exact", bidirectional=True)
def kl_div_log_target_batchmean_is_sum(x: Tensor(rank=2, dtype=("float32", "float64")),
                                       y: Tensor(rank=2, dtype=("float32", "float64"))):
    return (F.kl_div(x, y, reduction="batchmean", log_target=True),
            (torch.exp(y) * (y - x)).sum() / x.shape[0])


def _cross_entropy(x, t):
    return F.cross_entropy(x, t), F.nll_loss(F.log_softmax(x, 1), t)


def _cross_entropy_ignore(x, t):
    return F.cross_entropy(x, t, ignore_index=-100), F.cross_entropy(x, t)


for _dt in ("float32", "float64"):
    make_rule(f"cross_entropy_is_nll_of_log_softmax_{_dt}", _cross_entropy,
              {"x": Tensor(shape=(3, 4), dtype=_dt), "t": Tensor(shape=(3,), dtype="int64")},
              family=FAM, numerics="exact", bidirectional=True, source_text=f"ce_nll|{_dt}|v1")
make_rule("cross_entropy_default_ignore_index", _cross_entropy_ignore,
          {"x": Tensor(shape=(3, 4), dtype=("float32", "float64")), "t": Tensor(shape=(3,), dtype="int64")},
          family="spelling", numerics="exact", bidirectional=True, source_text="ce_ignore|v1")


def _cosine_embedding(a, b, y, m):
    prod = (a * b).sum(1)
    denom = (((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12)).sqrt()
    cos = prod / denom
    zeros = torch.zeros_like(cos)
    loss = torch.where(y == 1, 1 - cos, zeros) + torch.where(y == -1, (cos - m).clamp_min(0), zeros)
    return F.cosine_embedding_loss(a, b, y, margin=m), loss.mean()


per_dtype("cosine_embedding_loss_is_formula", _cosine_embedding,
          {"a": T(3, 4), "b": T(3, 4), "y": T(3), "m": Scalar(kind="float", values=(0.2, 0.5))},
          numerics="exact", bidirectional=False, doc="torch's own algorithm")


def _triplet(a, p, n, m):
    dp = F.pairwise_distance(a, p, 2.0, 1e-6)
    dn = F.pairwise_distance(a, n, 2.0, 1e-6)
    return F.triplet_margin_loss(a, p, n, margin=m, p=2), (m + dp - dn).clamp_min(0).mean()


per_dtype("triplet_margin_loss_is_pairwise_distances", _triplet,
          {"a": T(3, 4), "p": T(3, 4), "n": T(3, 4), "m": Scalar(kind="float", values=(0.2, 1.0))},
          numerics="exact", bidirectional=False, doc="torch's own algorithm")


# ---- indexing and masking forms ------------------------------------------------------------------


@rule(family=FAM, numerics="exact")
def embedding_is_index(i: Tensor(shape=(3,), dtype="int64"), w: Tensor(shape=(4, 5), dtype=FLOATING)):
    return F.embedding(i, w), w[i]


@rule(family="spelling", numerics="exact", bidirectional=True)
def embedding_module_call_form(i: Tensor(shape=(3,), dtype="int64"), w: Tensor(shape=(4, 5), dtype=FLOATING)):
    """nn.Embedding calls embedding with every argument."""
    return F.embedding(i, w, None, None, 2.0, False, False), F.embedding(i, w)


@rule(family=FAM, numerics="exact", bidirectional=True, same_shape=False)
def masked_fill_value_is_where(x: Tensor(rank=(2, 3, 4), dtype=("float32", "float64")),
                         m: Tensor(rank=(2, 3, 4), dtype="bool"), v: Scalar(kind="float", values=(-1e9, 0.0))):
    """One-way broadcasting only: masked_fill cannot grow x, where can."""
    return x.masked_fill(m, v), torch.where(m, v, x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def gather_method_is_function(x: Tensor(shape=(3, 4), dtype=FLOATING), i: Tensor(shape=(3, 1), dtype="int64"),
                              d: Scalar(kind="int", values=(1, 0))):
    return x.gather(d, i), torch.gather(x, d, i)


@rule(family="spelling", numerics="exact", bidirectional=True)
def scatter_method_is_function(x: Tensor(shape=(3, 4), dtype=FLOATING), i: Tensor(shape=(3, 1), dtype="int64"),
                               v: Scalar(kind="float", values=(0.0, 1.0))):
    return x.scatter(1, i, v), torch.scatter(x, 1, i, v)


@rule(family=FAM, numerics="exact", bidirectional=True)
def unbind_first_is_select(x: Tensor(rank=(2, 3, 4)), d: Scalar(kind="int", values=(0, 1))):
    return x.unbind(d)[0], x.select(d, 0)


@rule(family="spelling", numerics="exact", bidirectional=True)
def split_dim_keyword(x: Tensor(rank=(2, 3)), k: Scalar(kind="int", values=(2, 1)),
                      d: Scalar(kind="int", values=(-1, 1))):
    return x.split(k, dim=d)[0], x.split(k, d)[0]


@rule(family="spelling", numerics="exact", bidirectional=True)
def chunk_dim_keyword(x: Tensor(rank=(2, 3)), k: Scalar(kind="int", values=(3, 2)),
                      d: Scalar(kind="int", values=(-1, 1))):
    return x.chunk(k, dim=d)[0], x.chunk(k, d)[0]


@rule(family=FAM, numerics="exact", bidirectional=True)
def triu_is_where_mask(x: Tensor(rank=(2, 3), dtype=FLOATING), k: Scalar(kind="int", values=(1, 0))):
    return x.triu(k), torch.where(torch.ones_like(x, dtype=torch.bool).triu(k), x, 0)


@rule(family=FAM, numerics="exact", bidirectional=True)
def tril_is_where_mask(x: Tensor(rank=(2, 3), dtype=FLOATING), k: Scalar(kind="int", values=(0, -1))):
    return torch.tril(x, k), torch.where(torch.ones_like(x, dtype=torch.bool).tril(k), x, 0)


for _dt in ("float32", "float16", "bfloat16", "float64"):
    def _type_as(x, y):
        return x.type_as(y), x.to(y.dtype)

    make_rule(f"type_as_is_to_{_dt}", _type_as,
              {"x": Tensor(dtype=tuple(d for d in FLOATING if d != _dt)), "y": Tensor(dtype=_dt)},
              family="spelling", numerics="exact", same_shape=False, source_text=f"type_as|{_dt}|v2",
              doc="one way: the rhs no longer names y")


@rule(family="spelling", numerics="exact", bidirectional=True)
def bfloat16_method_is_to(x: Tensor(dtype=("float32", "float64", "float16"))):
    return x.bfloat16(), x.to(torch.bfloat16)


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_method_is_operator(x: Tensor(dtype=FLOATING), c: Scalar(kind="float", values=(2.0, 0.5, -1.0))):
    return x.pow(c), x ** c


@rule(family="spelling", numerics="exact", bidirectional=True)
def pow_method_int_is_operator(x: Tensor(dtype=FLOATING), c: Scalar(kind="int", values=(2, 3))):
    return x.pow(c), x ** c


@rule(family="spelling", numerics="exact", bidirectional=True)
def clamp_method_is_function(x: Tensor(dtype=FLOATING), lo: Scalar(kind="float", values=(0.0, -1.0))):
    return x.clamp(min=lo), torch.clamp(x, min=lo)


@rule(family="spelling", numerics="exact", bidirectional=True)
def cos_method_is_function(x: Tensor(dtype=FLOATING)):
    return x.cos(), torch.cos(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def sin_method_is_function(x: Tensor(dtype=FLOATING)):
    return x.sin(), torch.sin(x)


@rule(family=FAM, numerics="exact")
def zeros_like_is_zeros_rank2(x: Tensor(rank=2, dtype="float32")):
    return torch.zeros_like(x), torch.zeros(x.shape[0], x.shape[1])


@rule(family=FAM, numerics="exact")
def ones_like_is_ones_rank2(x: Tensor(rank=2, dtype="float32")):
    return torch.ones_like(x), torch.ones(x.shape[0], x.shape[1])


# ---- more ops of the corpus: spellings and decompositions ---------------------------------------


def _prelu2(x, w):
    return torch.prelu(x, w), torch.where(x > 0, x, w * x)


def _prelu4(x, w):
    return torch.prelu(x, w), torch.where(x > 0, x, w[:, None, None] * x)


# (one way: prelu checks the slopes' count, the where form broadcasts them)
per_dtype("prelu_rank2_is_where", _prelu2, {"x": T(3, 4), "w": T(4)}, numerics="exact", bidirectional=False)
per_dtype("prelu_rank4_is_where", _prelu4, {"x": T(2, 4, 3, 5), "w": T(4)}, numerics="exact",
          bidirectional=False)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def tanhshrink_is_x_minus_tanh(x: Tensor(dtype=FLOATING)):
    return F.tanhshrink(x), x - torch.tanh(x)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def softsign_is_x_over_one_plus_abs(x: Tensor(dtype=FLOATING)):
    return F.softsign(x), x / (1 + x.abs())


LAMBDA = Scalar(kind="float", values=(0.5, 1.0))


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def softshrink_is_where(x: Tensor(dtype=("float32", "float64")), lam: LAMBDA):
    """softshrink keeps NaN, the where form gives 0 for it."""
    return F.softshrink(x, lam), torch.where(x > lam, x - lam, torch.where(x + lam < 0, x + lam, 0.0))


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def hardshrink_is_where(x: Tensor(dtype=("float32", "float64")), lam: LAMBDA):
    return torch.hardshrink(x, lam), torch.where(x.abs() > lam, x, 0.0)


@rule(family=FAM, numerics="exact", bidirectional=True, same_shape=False)
def bucketize_is_searchsorted(x: Tensor(rank=(1, 2), dtype=("float32", "float64")),
                              b: Tensor(rank=1, dtype=("float32", "float64"))):
    return torch.bucketize(x, b), torch.searchsorted(b, x)


@rule(family=FAM, numerics="exact", same_shape=False)
def searchsorted_right_is_bucketize(b: Tensor(rank=1, dtype=("float32", "float64")),
                                    x: Tensor(rank=(1, 2), dtype=("float32", "float64"))):
    """One way: searchsorted also takes a batch of sorted sequences, bucketize one."""
    return torch.searchsorted(b, x, right=True), torch.bucketize(x, b, right=True)


@rule(family="spelling", numerics="exact", bidirectional=True)
def index_add_function_is_method(x: Tensor(shape=(5, 3), dtype=("float32", "float64")),
                                 i: Tensor(shape=(4,), dtype="int64"),
                                 s: Tensor(shape=(4, 3), dtype=("float32", "float64")),
                                 a: Scalar(kind="float", values=(0.5, 2.0))):
    return torch.index_add(x, 0, i, s, alpha=a), x.index_add(0, i, s, alpha=a)


@rule(family="spelling", numerics="exact", bidirectional=True)
def index_select_function_is_method(x: Tensor(shape=(5, 3)), i: Tensor(shape=(4,), dtype="int64"),
                                    d: Scalar(kind="int", values=(0, 1))):
    return torch.index_select(x, d, i), x.index_select(d, i)


@rule(family="spelling", numerics="exact")
def index_select_columns_is_index(x: Tensor(shape=(5, 3)), i: Tensor(shape=(4,), dtype="int64")):
    """One way: indexing accepts negative indices, index_select does not."""
    return x.index_select(1, i), x[:, i]


@rule(family="spelling", numerics="exact", bidirectional=True)
def triu_diagonal_keyword(x: Tensor(rank=(2, 3)), k: Scalar(kind="int", values=(1, 0))):
    return torch.triu(x, diagonal=k), x.triu(k)


@rule(family=FAM, numerics="exact")
def one_hot_is_compare_with_arange(i: Tensor(shape=(3,), dtype="int64"), n: Scalar(kind="int", values=(10, 12))):
    """One way: one_hot raises for classes out of range, the comparison gives zeros."""
    return F.one_hot(i, n), (i.unsqueeze(-1) == torch.arange(n)).long()


@rule(family="spelling", numerics="exact", bidirectional=True)
def scatter_reduce_method_is_function(x: Tensor(shape=(5, 3), dtype=("float32", "float64")),
                                      i: Tensor(shape=(4, 3), dtype="int64"),
                                      s: Tensor(shape=(4, 3), dtype=("float32", "float64"))):
    return (x.scatter_reduce(0, i, s, reduce="amax", include_self=False),
            torch.scatter_reduce(x, 0, i, s, reduce="amax", include_self=False))


@rule(family=FAM, numerics="exact", bidirectional=True)
def argsort_is_sort_indices(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64", "int64")),
                            d: Scalar(kind="int", values=(1, -1))):
    return torch.argsort(x, dim=d, descending=True), torch.sort(x, dim=d, descending=True)[1]


@rule(family="spelling", numerics="exact", bidirectional=True)
def take_along_dim_function_is_method(x: Tensor(shape=(3, 4), dtype=FLOATING), i: Tensor(shape=(3, 4), dtype="int64"),
                                      d: Scalar(kind="int", values=(1, 0))):
    return torch.take_along_dim(x, i, dim=d), x.take_along_dim(i, dim=d)


@rule(family="spelling", numerics="exact", bidirectional=True)
def tensor_unfold_keywords(x: Tensor(rank=(2, 3, 4), min_size=2), d: Scalar(kind="int", values=(-1, 1)),
                           k: Scalar(kind="int", values=(2, 1)), s: Scalar(kind="int", values=(1, 2))):
    return x.unfold(d, k, s), x.unfold(dimension=d, size=k, step=s)


@rule(family="spelling", numerics="exact", bidirectional=True)
def functional_unfold_keywords(x: Tensor(rank=4, dtype=("float32", "float64"), min_size=3),
                               k: Scalar(kind="int", values=(3, 2)), p: Scalar(kind="int", values=(1, 0))):
    return F.unfold(x, kernel_size=k, padding=p), F.unfold(x, k, 1, p, 1)


@rule(family=FAM, numerics="approximate")
def tensordot_is_flattened_matmul(x: Tensor(shape=(2, 3, 4), dtype=("float32", "float64")),
                                  w: Tensor(shape=(3, 4, 5), dtype=("float32", "float64"))):
    """One way: einsum accepts more spellings of a contraction than tensordot."""
    return torch.tensordot(x, w, dims=([1, 2], [0, 1])), torch.einsum("bij,ijo->bo", x, w)


@rule(family=FAM, numerics="exact")
def kron_is_broadcast_product(a: Tensor(shape=(2, 3), dtype=("float32", "float64")),
                              b: Tensor(shape=(4, 5), dtype=("float32", "float64"))):
    return torch.kron(a, b), (a[:, None, :, None] * b[None, :, None, :]).flatten(0, 1).flatten(1, 2)


@rule(family="spelling", numerics="exact", bidirectional=True)
def kthvalue_function_is_method(x: Tensor(rank=(1, 2), dtype=("float32", "float64")),
                                k: Scalar(kind="int", values=(1, 2))):
    return torch.kthvalue(x, k, dim=-1)[0], x.kthvalue(k, -1)[0]


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def median_is_middle_kthvalue(x: Tensor(rank=(1, 2), dtype=("float32", "float64"))):
    """The lower median is the ((n + 1) // 2)-th smallest value."""
    return torch.median(x, dim=-1)[0], torch.kthvalue(x, (x.shape[-1] + 1) // 2, dim=-1)[0]


@rule(family="spelling", numerics="exact", bidirectional=True)
def sort_function_is_method(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64", "int64"))):
    return torch.sort(x, dim=-1, descending=True)[0], x.sort(dim=-1, descending=True)[0]


@rule(family=FAM, numerics="ieee-edge", bidirectional=True)
def full_topk_is_sorted_descending(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64"))):
    return torch.topk(x, x.shape[-1], dim=-1)[0], x.sort(dim=-1, descending=True)[0]


@rule(family=FAM, numerics="ieee-edge")
def topk_values_is_sorted_prefix(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64")),
                                 k: Scalar(kind="int", values=(1, 2))):
    """One way (the values agree, the indices of ties need not); +0.0 and -0.0 tie."""
    return torch.topk(x, k, dim=-1)[0], x.sort(dim=-1, descending=True)[0].narrow(-1, 0, k)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def std_dims_is_sqrt_var(x: Tensor(rank=3, dtype=("float32", "float64"))):
    return torch.std(x, dim=(0, 2), correction=0), torch.var(x, dim=(0, 2), correction=0).sqrt()


@rule(family=FAM, numerics="approximate", bidirectional=True)
def l1_norm_is_abs_sum(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64"))):
    return x.norm(p=1, dim=-1), x.abs().sum(-1)


@rule(family=FAM, numerics="approximate", bidirectional=True)
def l2_norm_is_sqrt_sum_squares(x: Tensor(rank=(1, 2, 3), dtype=("float32", "float64"))):
    return x.norm(p=2, dim=-1), (x * x).sum(-1).sqrt()


@rule(family=FAM, numerics="approximate", bidirectional=True)
def frobenius_norm_is_sqrt_sum_squares(x: Tensor(rank=(2, 3), dtype=("float32", "float64"))):
    return torch.linalg.matrix_norm(x, ord="fro"), (x * x).sum((-2, -1)).sqrt()


for _dt in ("float32", "float64"):
    def _cumsum_tri(x, _dt=_dt):
        n = x.shape[-1]
        return x.cumsum(-1), x @ torch.ones(n, n, dtype=getattr(torch, _dt)).triu()

    make_rule(f"cumsum_is_matmul_upper_ones_{_dt}", _cumsum_tri, {"x": Tensor(rank=(1, 2, 3), dtype=_dt)},
              family=FAM, numerics="approximate", bidirectional=True, source_text=f"cumsum_tri|{_dt}|v1",
              doc="a running sum as a product with an upper triangle of ones")


@rule(family="spelling", numerics="exact", bidirectional=True)
def cross_entropy_default_keywords(x: Tensor(shape=(3, 4), dtype=("float32", "float64")),
                                   t: Tensor(shape=(3,), dtype="int64"), w: Tensor(shape=(4,), dtype=("float32", "float64")),
                                   ls: Scalar(kind="float", values=(0.1, 0.2))):
    return (F.cross_entropy(x, t, weight=w, ignore_index=-100, reduction="mean", label_smoothing=ls),
            F.cross_entropy(x, t, weight=w, label_smoothing=ls))


@rule(family=FAM, numerics="approximate", bidirectional=True)
def cross_entropy_label_smoothing_is_mixture(x: Tensor(shape=(3, 4), dtype=("float32", "float64")),
                                             t: Tensor(shape=(3,), dtype="int64"),
                                             ls: Scalar(kind="float", values=(0.1, 0.2))):
    """No class is ignored (targets are never -100 in a valid batch of class indices here)."""
    return (F.cross_entropy(x, t, label_smoothing=ls),
            F.cross_entropy(x, t) - ls * (F.cross_entropy(x, t) + F.log_softmax(x, 1).mean(1).mean()))


@rule(family=FAM, numerics="exact", bidirectional=True)
def cross_entropy_is_log_softmax_nll(x: Tensor(shape=(3, 4), dtype=("float32", "float64")),
                                     t: Tensor(shape=(3,), dtype="int64")):
    return F.cross_entropy(x, t), F.nll_loss(torch.log_softmax(x, dim=1), t)


@rule(family=FAM, numerics="exact", bidirectional=True)
def and_not_eye_is_off_diagonal(m: Tensor(shape=(2, 3, 4, 4), dtype="bool")):
    n = m.shape[-1]
    off = torch.arange(n, device=m.device)[:, None] != torch.arange(n, device=m.device)[None, :]
    return m & ~torch.eye(n, dtype=torch.bool, device=m.device), m & off


# ("mean" and "max" bags insist on offsets[0] == 0, which `rules check` cannot sample)
for _mode in ("sum",):
    def _bag(i, w, o, _mode=_mode):
        return (F.embedding_bag(i, w, o, None, 2.0, False, _mode, False, None, False, None),
                F.embedding_bag(i, w, o, mode=_mode))

    make_rule(f"embedding_bag_{_mode}_positional_is_keywords", _bag,
              {"i": Tensor(shape=(4,), dtype="int64"), "w": Tensor(shape=(5, 3), dtype=("float32", "float64")),
               "o": Tensor(shape=(2,), dtype="int64")}, family="spelling", numerics="exact",
              bidirectional=True, source_text=f"embedding_bag_kw|{_mode}|v1")


# ---- F.normalize, eval-mode rrelu, affine_grid ---------------------------------------------------
# (torch.nn.functional.normalize was taken for a random op before lowering.targets matched
# random ops by exact name, so no rule could name it)

NORM_P = Scalar(kind="float", values=(2.0, 1.0))
NORM_DIM = Scalar(kind="int", values=(1, -1, 0))


@rule(family=FAM, numerics="exact", bidirectional=True)
def normalize_is_divide_by_clamped_norm(x: Tensor(rank=(2, 3, 4, 1), dtype=FLOATING), p: NORM_P, d: NORM_DIM):
    """torch's own algorithm (F.normalize is Python): x / ||x||_p clamped below by eps."""
    return (F.normalize(x, p=p, dim=d),
            x / x.norm(p, d, keepdim=True).clamp_min(1e-12).expand_as(x))


@rule(family=FAM, numerics="exact", bidirectional=True)
def normalize_default_p_is_divide_by_clamped_norm(x: Tensor(rank=(2, 3, 4, 1), dtype=FLOATING), d: NORM_DIM):
    return F.normalize(x, dim=d), x / x.norm(2.0, d, keepdim=True).clamp_min(1e-12).expand_as(x)


@rule(family="spelling", numerics="exact", bidirectional=True)
def normalize_default_p_keyword(x: Tensor(rank=(2, 3, 4, 1), dtype=FLOATING), d: NORM_DIM):
    return F.normalize(x, dim=d), F.normalize(x, p=2.0, dim=d)


@rule(family=FAM, numerics="approximate")
def normalize_l2_is_rsqrt_form(x: Tensor(rank=(2, 3, 4, 1), dtype=("float32", "float64")), d: NORM_DIM):
    """One way: sqrt of the sum of squares as the norm, the clamp at eps squared."""
    return F.normalize(x, dim=d), x * (x * x).sum(d, keepdim=True).clamp_min(1e-24).rsqrt()


# rrelu with training=False is leaky_relu with the mean slope (lower + upper) / 2 (computed in
# double by torch, as here); with training=True it is random (lowering.targets.is_random) and no
# rule applies. One rule per (lower, upper): the slope is a literal no rule variable can derive.
for _i, (_lo, _up) in enumerate(((1.0 / 8, 1.0 / 3), (0.1, 0.3), (0.01, 0.1))):
    _slope = (_lo + _up) / 2

    def _rrelu_eval(x, _lo=_lo, _up=_up, _slope=_slope):
        return F.rrelu(x, lower=_lo, upper=_up, training=False), F.leaky_relu(x, _slope)

    def _rrelu_eval_positional(x, _lo=_lo, _up=_up, _slope=_slope):
        return F.rrelu(x, _lo, _up, False), F.leaky_relu(x, _slope)

    for _nm, _body in (("", _rrelu_eval), ("_positional", _rrelu_eval_positional)):
        make_rule(f"rrelu_eval{_nm}_is_leaky_relu_{_i}", _body, {"x": Tensor(dtype=FLOATING)},
                  family=FAM, numerics="exact", bidirectional=False,
                  source_text=f"rrelu_eval{_nm}|{_lo!r}|{_up!r}|v1",
                  doc=f"rrelu(lower={_lo:g}, upper={_up:g}, training=False) = leaky_relu(slope {_slope!r})")


@rule(family=FAM, numerics="exact")
def rrelu_default_is_leaky_relu(x: Tensor(dtype=FLOATING)):
    """F.rrelu's defaults: lower 1/8, upper 1/3, training=False."""
    return F.rrelu(x), F.leaky_relu(x, (1.0 / 8 + 1.0 / 3) / 2)


# affine_grid (2-D, align_corners=False): grid[n, h, w] = theta[n] @ (x_w, y_h, 1) with
# x_w = (2w + 1) / W - 1 and y_h = (2h + 1) / H - 1 (torch: linspace(-1, 1, W) * (W - 1) / W).
# torch multiplies a base grid by theta with bmm; the broadcast form sums the same three
# products, so the class is approximate. affine_grid insists on theta's last extents (2, 3), so a
# rule's traces cannot rename them; the batch in the size list can only be a scalar variable
# (affine_grid raises unless it is theta's) when theta comes from a view of a tensor whose
# extents may change: `t.view(-1, 2, 3)`, as a localization net's output (spatial transformers).
AG_N = Scalar(kind="int", values=(2, 24, 1, 4))  # trace A's t (2, 6) gives 2 thetas, trace B's 24
AG_C = Scalar(kind="int", values=(3, 2))
AG_H = Scalar(kind="int", values=(4, 6))
AG_W = Scalar(kind="int", values=(5, 7))


def _affine_grid_rhs(theta, h, w):
    dt = theta.dtype
    xs = (torch.arange(w, dtype=dt, device=theta.device) * 2 + 1) / w - 1
    ys = (torch.arange(h, dtype=dt, device=theta.device) * 2 + 1) / h - 1
    t = theta[:, None, None, :, :]  # (N, 1, 1, 2, 3)
    return xs[None, None, :, None] * t[..., 0] + ys[None, :, None, None] * t[..., 1] + t[..., 2]


def _affine_grid_view(t, n, c, h, w):
    theta = t.view(-1, 2, 3)
    return F.affine_grid(theta, [n, c, h, w], align_corners=False), _affine_grid_rhs(theta, h, w)


def _affine_grid_reshape(t, n, c, h, w):
    theta = t.reshape(-1, 2, 3)
    return F.affine_grid(theta, [n, c, h, w], align_corners=False), _affine_grid_rhs(theta, h, w)


_AG = {"t": T(2, 6), "n": AG_N, "c": AG_C, "h": AG_H, "w": AG_W}
per_dtype("affine_grid_of_view_is_broadcast_base_grid", _affine_grid_view, _AG, bidirectional=False,
          doc="one way: the rhs does not say the batch's channel count")
per_dtype("affine_grid_of_reshape_is_broadcast_base_grid", _affine_grid_reshape, _AG, bidirectional=False,
          doc="one way: the rhs does not say the batch's channel count")

"""Linear-algebra rules: matmul spellings, mm/bmm/mv/dot/einsum as matmul, F.linear and addmm forms, transposes of products."""
import torch
import torch.nn.functional as F

from eqsat_test.rewrite.ruledsl import FLOATING, Scalar, Tensor, rule, rule_pair

# Operands get an example `shape` so that the rule compiler can trace them (matmul needs fitting
# extents); the rules still match operands of any size with those ranks.


def M(*shape):
    return Tensor(shape=shape, dtype=FLOATING)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def matmul_op_is_torch_matmul(x: M(3, 4), y: M(4, 5)):
    return x @ y, torch.matmul(x, y)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def matmul_op_is_method(x: M(3, 4), y: M(4, 5)):
    return x @ y, x.matmul(y)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def batched_matmul_op_is_torch_matmul(x: M(2, 3, 4), y: M(2, 4, 5)):
    return x @ y, torch.matmul(x, y)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def mm_is_matmul(x: M(3, 4), y: M(4, 5)):
    return torch.mm(x, y), x @ y


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def mm_method_is_function(x: M(3, 4), y: M(4, 5)):
    return x.mm(y), torch.mm(x, y)


@rule(family="linalg", numerics="exact", same_shape=False)
def bmm_is_matmul(x: M(2, 3, 4), y: M(2, 4, 5)):
    """One way only: matmul broadcasts batch dimensions, bmm does not."""
    return torch.bmm(x, y), x @ y


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def mv_is_matmul(a: M(3, 4), v: M(4)):
    return torch.mv(a, v), a @ v


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def dot_is_matmul(x: Tensor(rank=1, dtype=FLOATING), y: Tensor(rank=1, dtype=FLOATING)):
    return torch.dot(x, y), x @ y


@rule(family="linalg", numerics="approximate", same_shape=False)
def dot_is_mul_sum(x: Tensor(rank=1, dtype=FLOATING), y: Tensor(rank=1, dtype=FLOATING)):
    """One way only: dot wants equal dtypes and lengths, mul-sum promotes and broadcasts."""
    return torch.dot(x, y), (x * y).sum()


@rule(family="linalg", numerics="approximate", same_shape=False)
def matmul_is_einsum_ij_jk(x: M(3, 4), y: M(4, 5)):
    """One way only: einsum broadcasts a size-1 contraction dimension, matmul raises. Not bitwise:
    einsum reorders its operands before the BLAS call."""
    return x @ y, torch.einsum("ij,jk->ik", x, y)


@rule(family="linalg", numerics="approximate", same_shape=False)
def bmm_is_einsum(x: M(2, 3, 4), y: M(2, 4, 5)):
    """One way only: einsum broadcasts size-1 batch and contraction dimensions, bmm raises. Not
    bitwise: with a size-1 contraction einsum multiplies instead (the sign of zero products differ)."""
    return torch.bmm(x, y), torch.einsum("bij,bjk->bik", x, y)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def outer_is_broadcast_mul(x: Tensor(rank=1, dtype=FLOATING), y: Tensor(rank=1, dtype=FLOATING)):
    return torch.outer(x, y), x.unsqueeze(1) * y.unsqueeze(0)


# The transposes of products go one way, towards the product of transposes: a product is
# contiguous and its transpose is not, so the other way would put a non-contiguous tensor into a
# class that a program's `.view(...)` may read.
@rule(family="linalg", numerics="approximate", same_shape=False)
def transpose_of_product(x: M(3, 4), y: M(4, 5)):
    return (x @ y).t(), y.t() @ x.t()


@rule(family="linalg", numerics="approximate", same_shape=False)
def product_of_transposes(x: M(4, 3), y: M(5, 4)):
    """Bitwise equal on CPU in our samples (the BLAS call differs only in transpose flags), but
    no BLAS promises that. (The transpose written `.transpose(0, 1)`: transpose_of_product has `.t()`.)"""
    return (y @ x).transpose(0, 1), x.t() @ y.t()


@rule(family="linalg", numerics="approximate", same_shape=False)
def batched_transpose_of_product(x: M(2, 3, 4), y: M(2, 4, 5)):
    return (x @ y).transpose(-1, -2), y.transpose(-1, -2) @ x.transpose(-1, -2)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def linear_no_bias_is_matmul_t(x: M(3, 4), w: M(5, 4)):
    return F.linear(x, w), x @ w.t()


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def batched_linear_no_bias_is_matmul_t(x: M(2, 3, 4), w: M(5, 4)):
    return F.linear(x, w), x @ w.t()


def _linear_is_matmul_add(dt: str):
    def lhs(x: Tensor(shape=(3, 4), dtype=dt), w: Tensor(shape=(5, 4), dtype=dt),
            b: Tensor(shape=(5,), dtype=dt)):
        """F.linear with bias -> matmul + add, for one dtype shared by x, w and b: with mixed
        dtypes F.linear casts the bias to x's dtype while `+ b` promotes. One way only: `+ b`
        broadcasts a bias of any compatible shape, F.linear wants out_features."""
        return F.linear(x, w, b)

    def rhs(x: Tensor(shape=(3, 4), dtype=dt), w: Tensor(shape=(5, 4), dtype=dt),
            b: Tensor(shape=(5,), dtype=dt)):
        return x @ w.t() + b

    return rule_pair(lhs, rhs, name=f"linear_is_matmul_add_{dt}", family="linalg",
                     numerics="approximate", same_shape=False)


for _dt in FLOATING:
    _linear_is_matmul_add(_dt)


@rule(family="linalg", numerics="exact", bidirectional=True, same_shape=False)
def linear_is_addmm(x: M(3, 4), w: M(5, 4), b: M(5)):
    return F.linear(x, w, b), torch.addmm(b, x, w.t())


@rule(family="linalg", numerics="approximate", same_shape=False)
def addmm_is_add_mm(b: M(5), x: M(3, 4), y: M(4, 5)):
    """One way only: addmm expands b to the product's shape, `b + x @ y` broadcasts both ways."""
    return torch.addmm(b, x, y), b + x @ y


@rule(family="linalg", numerics="approximate", same_shape=False)
def baddbmm_is_add_bmm(b: M(2, 3, 5), x: M(2, 3, 4), y: M(2, 4, 5)):
    return torch.baddbmm(b, x, y), b + torch.bmm(x, y)


@rule(family="linalg", numerics="approximate", same_shape=False)
def factor_common_left_operand(x: M(3, 4), y: M(4, 5), z: M(4, 5)):
    """One way only: x @ (y + z) -> x @ y + x @ z breaks when y + z broadcasts."""
    return x @ y + x @ z, x @ (y + z)


@rule(family="linalg", numerics="approximate", bidirectional=True, same_shape=False)
def scale_moves_out_of_matmul(x: M(3, 4), y: M(4, 5), s: Scalar(kind="float", values=(0.5, -2.0, 3.25))):
    return (x * s) @ y, (x @ y) * s


@rule(family="linalg", numerics="ieee-edge", bidirectional=True, same_shape=False)
def negation_moves_out_of_matmul(x: M(3, 4), y: M(4, 5)):
    return (-x) @ y, -(x @ y)

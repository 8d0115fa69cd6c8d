"""Algebra rules: commutativity, associativity, distributivity, negation, reciprocal, exp/log and abs/sign identities."""
import torch

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, BOOL, FLOATING, INTEGRAL, NUMERIC, SIGNED, Tensor, rule

# ---- commutativity (one-way: each is its own inverse); tagged "ac" for back-off scheduling -------

# Operands that are never 0-dim. A 0-dim tensor of another dtype does not take part in type
# promotion like a dimensioned one: `x * y` with x a 0-dim float32 and y a float16 tensor gives
# float16, and whether x is rounded to float16 before the product depends on the operand order
# (for a 0-dim x = 0.3754, x * y and y * x differ in the last bit), so rules that reorder operands hold
# bitwise only between dimensioned tensors.
DIMENSIONED = (1, 2, 3, 4)


# Mixed integer/floating operands are left out on purpose: torch CPU computes `f16 * i32` with a
# one-element int32 operand in float32 before rounding, but `i32 * f16` converts the int to
# float16 first (e.g. 0.5 * 70000 is 35008 one way and inf the other), so the operand order
# matters there. Within the floating dtypes, and within the integer/bool dtypes, it does not.


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def add_commutes(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x + y, y + x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def add_commutes_int(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return x + y, y + x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def mul_commutes(x: Tensor(rank=DIMENSIONED, dtype=FLOATING), y: Tensor(rank=DIMENSIONED, dtype=FLOATING)):
    return x * y, y * x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def mul_commutes_int(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return x * y, y * x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def torch_add_commutes(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return torch.add(x, y), torch.add(y, x)


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def torch_mul_commutes(x: Tensor(rank=DIMENSIONED, dtype=FLOATING),
                       y: Tensor(rank=DIMENSIONED, dtype=FLOATING)):
    return torch.mul(x, y), torch.mul(y, x)


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def torch_mul_commutes_int(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return torch.mul(x, y), torch.mul(y, x)


@rule(family="algebra", numerics="ieee-edge", same_shape=False, tags=("ac",))
def maximum_commutes(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """maximum(-0.0, +0.0) returns its second argument: the sign of a zero result can flip."""
    return torch.maximum(x, y), torch.maximum(y, x)


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def maximum_commutes_int(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return torch.maximum(x, y), torch.maximum(y, x)


@rule(family="algebra", numerics="ieee-edge", same_shape=False, tags=("ac",))
def minimum_commutes(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return torch.minimum(x, y), torch.minimum(y, x)


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def bitand_commutes(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return x & y, y & x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def bitor_commutes(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return x | y, y | x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def bitxor_commutes(x: Tensor(dtype=INTEGRAL + BOOL), y: Tensor(dtype=INTEGRAL + BOOL)):
    return x ^ y, y ^ x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def eq_commutes(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x == y, y == x


@rule(family="algebra", numerics="exact", same_shape=False, tags=("ac",))
def ne_commutes(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x != y, y != x


# ---- associativity: approximate in floating point, exact for one integer dtype -----------------


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False, tags=("ac",))
def add_associates(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING), z: Tensor(dtype=FLOATING)):
    return (x + y) + z, x + (y + z)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False, tags=("ac",))
def add_associates_int64(x: Tensor(dtype="int64"), y: Tensor(dtype="int64"), z: Tensor(dtype="int64")):
    """Two's-complement wrap-around is associative; mixed integer widths are not (wrap happens at
    a different width), hence the single dtype."""
    return (x + y) + z, x + (y + z)


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False, tags=("ac",))
def mul_associates(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING), z: Tensor(dtype=FLOATING)):
    return (x * y) * z, x * (y * z)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False, tags=("ac",))
def mul_associates_int64(x: Tensor(dtype="int64"), y: Tensor(dtype="int64"), z: Tensor(dtype="int64")):
    return (x * y) * z, x * (y * z)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False, tags=("ac",))
def bitand_associates(x: Tensor(dtype=BOOL), y: Tensor(dtype=BOOL), z: Tensor(dtype=BOOL)):
    return (x & y) & z, x & (y & z)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False, tags=("ac",))
def bitor_associates(x: Tensor(dtype=BOOL), y: Tensor(dtype=BOOL), z: Tensor(dtype=BOOL)):
    return (x | y) | z, x | (y | z)


@rule(family="algebra", numerics="ieee-edge", bidirectional=True, same_shape=False, tags=("ac",))
def maximum_associates(x: Tensor(rank=DIMENSIONED, dtype=FLOATING), y: Tensor(rank=DIMENSIONED, dtype=FLOATING),
                       z: Tensor(rank=DIMENSIONED, dtype=FLOATING)):
    """Dimensioned operands only: maximum(y, z) with y 0-dim float32 and z a float16 tensor rounds
    y to float16, maximum(maximum(x, y), z) with a float64 x does not (see DIMENSIONED)."""
    return torch.maximum(torch.maximum(x, y), z), torch.maximum(x, torch.maximum(y, z))


# ---- distributivity (approximate) ---------------------------------------------------------------


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False)
def mul_distributes_over_add(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING),
                             z: Tensor(dtype=FLOATING)):
    return x * (y + z), x * y + x * z


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False)
def mul_distributes_over_sub(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING),
                             z: Tensor(dtype=FLOATING)):
    return x * (y - z), x * y - x * z


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False)
def div_distributes_over_add(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING),
                             z: Tensor(dtype=("float32", "float64", "bfloat16"))):
    """Not for a float16 divisor: x / z overflows float16 for |z| < 1.5e-5 where (x + y) / z
    need not (computed wider when y is wider, or cancelling: 1/z + -1/z is NaN, 0/z is 0)."""
    return (x + y) / z, x / z + y / z


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def mul_distributes_int64(x: Tensor(dtype="int64"), y: Tensor(dtype="int64"), z: Tensor(dtype="int64")):
    return x * (y + z), x * y + x * z


# ---- negation ----------------------------------------------------------------------------------


@rule(family="algebra", numerics="exact")
def double_negation(x: Tensor(dtype=NUMERIC)):
    return -(-x), x


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def sub_is_add_neg(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x - y, x + (-y)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def sub_is_add_neg_int64(x: Tensor(dtype="int64"), y: Tensor(dtype="int64")):
    return x - y, x + (-y)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def sub_neg_is_add(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return x - (-y), x + y


@rule(family="algebra", numerics="ieee-edge", bidirectional=True, same_shape=False)
def neg_sub_is_swapped_sub(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """-(x - y) is -0.0 where x == y; y - x is +0.0."""
    return -(x - y), y - x


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def neg_mul_is_mul_neg(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return (-x) * y, -(x * y)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def neg_div_is_div_neg(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return (-x) / y, -(x / y)


@rule(family="algebra", numerics="exact", bidirectional=True)
def mul_minus_one_is_neg(x: Tensor(dtype=SIGNED)):
    return x * -1, -x


@rule(family="algebra", numerics="exact", bidirectional=True)
def add_self_is_mul_two(x: Tensor(dtype=NUMERIC)):
    return x + x, x * 2


@rule(family="algebra", numerics="exact", bidirectional=True)
def div_two_is_mul_half(x: Tensor(dtype=NUMERIC)):
    return x / 2, x * 0.5


# ---- reciprocal, exp / log ---------------------------------------------------------------------


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False)
def div_is_mul_reciprocal(x: Tensor(dtype=FLOATING), y: Tensor(dtype=("float32", "float64", "bfloat16"))):
    """Not for a float16 divisor: 1 / y overflows to inf for |y| < 1.5e-5, where x / y is finite
    (e.g. bfloat16 x / float16 y is computed in float32)."""
    return x / y, x * torch.reciprocal(y)


@rule(family="algebra", numerics="approximate")
def reciprocal_involution(x: Tensor(dtype=FLOATING)):
    return torch.reciprocal(torch.reciprocal(x)), x


@rule(family="algebra", numerics="approximate", bidirectional=True, same_shape=False)
def exp_of_sum_is_product(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return torch.exp(x + y), torch.exp(x) * torch.exp(y)


@rule(family="algebra", numerics="approximate", bidirectional=True)
def exp_neg_is_reciprocal_exp(x: Tensor(dtype=FLOATING)):
    return torch.exp(-x), torch.reciprocal(torch.exp(x))


@rule(family="algebra", numerics="approximate")
def log_of_exp(x: Tensor(dtype=FLOATING)):
    return torch.log(torch.exp(x)), x


@rule(family="algebra", numerics="approximate", bidirectional=True)
def log_of_square_is_twice_log_abs(x: Tensor(dtype=("float32", "float64"))):
    """Not for half precision: x * x underflows to 0 (log: -inf) already for |x| < 2.5e-4."""
    return torch.log(x * x), 2 * torch.log(torch.abs(x))


# ---- abs / sign --------------------------------------------------------------------------------


@rule(family="algebra", numerics="exact")
def abs_idempotent(x: Tensor(dtype=NUMERIC)):
    return torch.abs(torch.abs(x)), torch.abs(x)


@rule(family="algebra", numerics="exact")
def abs_of_neg(x: Tensor(dtype=SIGNED)):
    return torch.abs(-x), torch.abs(x)


@rule(family="algebra", numerics="exact", bidirectional=True, same_shape=False)
def abs_of_product(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return torch.abs(x * y), torch.abs(x) * torch.abs(y)


@rule(family="algebra", numerics="ieee-edge")
def sign_times_abs(x: Tensor(dtype=SIGNED)):
    return torch.sign(x) * torch.abs(x), x


@rule(family="algebra", numerics="approximate")
def sqrt_of_square_is_abs(x: Tensor(dtype=FLOATING)):
    """Exact in round-to-nearest unless x*x under- or overflows (subnormal or huge x)."""
    return torch.sqrt(x * x), torch.abs(x)


@rule(family="algebra", numerics="exact", bidirectional=True)
def ceil_is_neg_floor_neg(x: Tensor(dtype=FLOATING)):
    return torch.ceil(x), -torch.floor(-x)


@rule(family="algebra", numerics="exact", bidirectional=True)
def sin_is_odd(x: Tensor(dtype=FLOATING)):
    return torch.sin(-x), -torch.sin(x)


@rule(family="algebra", numerics="exact")
def cos_is_even(x: Tensor(dtype=FLOATING)):
    return torch.cos(-x), torch.cos(x)


@rule(family="algebra", numerics="exact", bidirectional=True)
def tanh_is_odd(x: Tensor(dtype=FLOATING)):
    return torch.tanh(-x), -torch.tanh(x)

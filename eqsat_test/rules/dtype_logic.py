"""Dtype and logic rules: exact casts and round trips, comparisons and their negations, boolean logic, where/masked_fill forms, NaN tests."""
import torch

from eqsat_test.rewrite.ruledsl import ANY_DTYPE, BOOL, FLOATING, INTEGRAL, NUMERIC, Tensor, rule

# ---- casts: spellings and exact round trips ----------------------------------------------------


def _without(name: str) -> tuple:
    return tuple(d for d in ANY_DTYPE if d != name)



@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def float_is_to_float32(x: Tensor(dtype=_without("float32"))):
    """Source dtypes only: a cast to the dtype a tensor already has is dropped by Dynamo."""
    return x.float(), x.to(torch.float32)


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def double_is_to_float64(x: Tensor(dtype=_without("float64"))):
    return x.double(), x.to(torch.float64)


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def half_is_to_float16(x: Tensor(dtype=_without("float16"))):
    return x.half(), x.to(torch.float16)


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def long_is_to_int64(x: Tensor(dtype=_without("int64"))):
    return x.long(), x.to(torch.int64)


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def int_is_to_int32(x: Tensor(dtype=_without("int32"))):
    return x.int(), x.to(torch.int32)


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def bool_is_to_bool(x: Tensor(dtype=_without("bool"))):
    return x.bool(), x.to(torch.bool)


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def to_dtype_is_type(x: Tensor(dtype=_without("float64"))):
    return x.to(torch.float64), x.type(torch.float64)


@rule(family="dtype-logic", numerics="exact")
def float32_via_float64_round_trip(x: Tensor(dtype="float32")):
    return x.double().float(), x


@rule(family="dtype-logic", numerics="exact")
def float16_via_float32_round_trip(x: Tensor(dtype="float16")):
    return x.float().half(), x


@rule(family="dtype-logic", numerics="exact")
def bfloat16_via_float32_round_trip(x: Tensor(dtype="bfloat16")):
    return x.float().to(torch.bfloat16), x


@rule(family="dtype-logic", numerics="exact")
def int32_via_float64_round_trip(x: Tensor(dtype="int32")):
    return x.double().int(), x


@rule(family="dtype-logic", numerics="exact")
def int32_via_int64_round_trip(x: Tensor(dtype="int32")):
    return x.long().int(), x


@rule(family="dtype-logic", numerics="exact")
def int16_via_float32_round_trip(x: Tensor(dtype="int16")):
    return x.float().to(torch.int16), x


@rule(family="dtype-logic", numerics="exact")
def int8_via_int32_round_trip(x: Tensor(dtype="int8")):
    return x.int().to(torch.int8), x


@rule(family="dtype-logic", numerics="exact")
def uint8_via_int64_round_trip(x: Tensor(dtype="uint8")):
    return x.long().to(torch.uint8), x


@rule(family="dtype-logic", numerics="exact")
def bool_via_float_round_trip(x: Tensor(dtype=BOOL)):
    return x.float().bool(), x


@rule(family="dtype-logic", numerics="exact")
def bool_via_uint8_round_trip(x: Tensor(dtype=BOOL)):
    return x.to(torch.uint8).bool(), x


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def bool_cast_is_ne_zero(x: Tensor(dtype=NUMERIC)):
    """NaN is truthy on both sides."""
    return x.bool(), x != 0


# ---- comparisons -------------------------------------------------------------------------------


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def gt_is_swapped_lt(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x > y, y < x


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def ge_is_swapped_le(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return x >= y, y <= x


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def not_gt_is_le_int(x: Tensor(dtype=INTEGRAL), y: Tensor(dtype=INTEGRAL)):
    return ~(x > y), x <= y


@rule(family="dtype-logic", numerics="ieee-edge", bidirectional=True, same_shape=False)
def not_gt_is_le(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """Wrong where x or y is NaN: ~(NaN > y) is True, NaN <= y is False."""
    return ~(x > y), x <= y


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def not_lt_is_ge_int(x: Tensor(dtype=INTEGRAL), y: Tensor(dtype=INTEGRAL)):
    return ~(x < y), x >= y


@rule(family="dtype-logic", numerics="ieee-edge", bidirectional=True, same_shape=False)
def not_lt_is_ge(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return ~(x < y), x >= y


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def not_eq_is_ne(x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    """Exact even with NaN: NaN != NaN and not (NaN == NaN) agree."""
    return ~(x == y), x != y


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def gt_or_eq_is_ge(x: Tensor(dtype=NUMERIC), y: Tensor(dtype=NUMERIC)):
    return (x > y) | (x == y), x >= y


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def lt_or_gt_is_ne_int(x: Tensor(dtype=INTEGRAL), y: Tensor(dtype=INTEGRAL)):
    return (x < y) | (x > y), x != y


@rule(family="dtype-logic", numerics="ieee-edge", bidirectional=True, same_shape=False)
def lt_or_gt_is_ne(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    return (x < y) | (x > y), x != y


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def isnan_is_ne_self(x: Tensor(dtype=ANY_DTYPE)):
    return torch.isnan(x), x != x


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def isfinite_is_not_nan_or_inf(x: Tensor(dtype=FLOATING)):
    return torch.isfinite(x), ~(torch.isnan(x) | torch.isinf(x))


# ---- boolean logic -----------------------------------------------------------------------------


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def logical_and_is_bitand(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return torch.logical_and(a, b), a & b


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def logical_or_is_bitor(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return torch.logical_or(a, b), a | b


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def logical_xor_is_bitxor(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return torch.logical_xor(a, b), a ^ b


@rule(family="dtype-logic", numerics="exact", bidirectional=True)
def logical_not_is_invert(a: Tensor(dtype=BOOL)):
    return torch.logical_not(a), ~a


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def logical_and_is_method(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return torch.logical_and(a, b), a.logical_and(b)


@rule(family="dtype-logic", numerics="exact")
def double_invert(x: Tensor(dtype=INTEGRAL + BOOL)):
    return ~~x, x


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def de_morgan_and(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    """Bool only: with mixed integer widths ~ happens before or after sign/zero extension."""
    return ~(a & b), ~a | ~b


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def de_morgan_or(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return ~(a | b), ~a & ~b


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def xor_is_ne_for_bool(a: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return a ^ b, a != b


# ---- where / masked_fill -----------------------------------------------------------------------


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def where_negated_condition(c: Tensor(dtype=BOOL), x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return torch.where(c, x, y), torch.where(~c, y, x)


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def where_method_is_function(c: Tensor(dtype=BOOL), x: Tensor(dtype=ANY_DTYPE), y: Tensor(dtype=ANY_DTYPE)):
    return torch.where(c, x, y), x.where(c, y)


@rule(family="dtype-logic", numerics="ieee-edge", bidirectional=True, same_shape=False)
def where_gt_is_maximum(x: Tensor(dtype=FLOATING), y: Tensor(dtype=FLOATING)):
    """maximum propagates NaN, the where form picks y."""
    return torch.where(x > y, x, y), torch.maximum(x, y)


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def where_gt_is_maximum_int(x: Tensor(dtype=INTEGRAL), y: Tensor(dtype=INTEGRAL)):
    return torch.where(x > y, x, y), torch.maximum(x, y)


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def where_lt_is_minimum_int(x: Tensor(dtype=INTEGRAL), y: Tensor(dtype=INTEGRAL)):
    return torch.where(x < y, x, y), torch.minimum(x, y)


@rule(family="dtype-logic", numerics="ieee-edge", bidirectional=True, same_shape=False)
def where_zero_is_mask_mul(c: Tensor(dtype=BOOL), x: Tensor(dtype=FLOATING)):
    """x * False is NaN for inf/NaN x and -0.0 for negative x."""
    return torch.where(c, x, torch.zeros_like(x)), x * c


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def where_zero_is_mask_mul_int(c: Tensor(dtype=BOOL), x: Tensor(dtype=INTEGRAL)):
    return torch.where(c, x, torch.zeros_like(x)), x * c


@rule(family="dtype-logic", numerics="exact", same_shape=False)
def masked_fill_is_where(x: Tensor(dtype=NUMERIC), c: Tensor(dtype=BOOL)):
    """One way only: masked_fill keeps x's shape (c must broadcast to it), where broadcasts both."""
    return x.masked_fill(c, 0), torch.where(c, 0, x)


@rule(family="dtype-logic", numerics="exact", bidirectional=True, same_shape=False)
def where_bool_is_and(c: Tensor(dtype=BOOL), b: Tensor(dtype=BOOL)):
    return torch.where(c, b, torch.zeros_like(b)), c & b

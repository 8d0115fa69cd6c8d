"""The oracle's tuned constants, each in one place with the reason for its value (docs/oracle.md names the rules that use them)."""
from __future__ import annotations

import torch

# ----------------------------------------------------------------------------------------------
# rule 1's bound (numerics.bound):
#
#   |c - f| <= M(n) * yard + ROUND_ULPS * (ulp(f) + eps(D) * typ) + K(n) * eps(acc(D)) * (|f| + typ) + tiny(D)
#
# MEASURED with `python benchmarks/oracle_detection.py --calibrate` (real torch.compile(inductor) vs
# eager on a CPU, torch 2.13; 19 programs: a 2**20-term sum, 64 and 4 row sums that cancel to ~0, 256
# and 4 row sums, row means, matmul, relu(matmul), layer_norm (mean 5 std 3; mean 100 std 1), softmax,
# log_softmax, var, cumsum, rmsnorm, conv2d, attention, GELU MLP + softmax, gelu*tanh+exp). No false
# alarm in float32 (100 seeds), bfloat16 and float16 (50 each). The largest |c - f| / bound over every
# element and seed: float32 0.45 (64 row sums that cancel), bfloat16 0.46 and float16 0.48 (the GELU
# MLP), the rest below 0.4. float64 (30 seeds; no independent reference, rule 6): row sums that cancel
# to ~1e-13 fail every seed (nothing in the outputs shows the terms' magnitude), layer_norm of mean 100
# x std reaches 0.76, the rest below 0.4.

# Peers: the elements of the leaf at most this many times larger (in |fp64|) than the element judged.
# Larger ones say nothing of its error (rows holding 1e30 on special inputs, a softmax row's one large
# probability beside its tiny ones); smaller ones do (near-zero elements of a matmul row err like the row).
PEER_RANGE = 2.0**16
# The yardstick is this quantile of eager's errors over the peers: not the max, so that a few
# ill-conditioned peers do not widen the rest, and not the median, which is noisier.
YARD_QUANTILE = 0.75
# The quantile is computed over prefix lengths on a geometric grid of this ratio: at most 25% extra
# peers, fewer than the 25% above the quantile.
PEER_GRID = 1.25
# Eager's error counts beyond this many ulps of its result: the rounding of the result itself.
OWN_ROUNDING_ULPS = 0.5
# M(n) = M_MANY * MANY_PEERS / n within [M_MANY, M_ONE]: another summation order's error is a
# heavy-tailed multiple of eager's (Inductor's 2**20-term sum is up to ~1000x further from fp64 than
# eager's cascade sum when the total cancels); the fewer the peers, the less their errors say.
MANY_PEERS = 32
M_MANY = 64.0
M_ONE = 512.0
# Rounding to D: of the result, and of intermediates stored in D (between kernels, or after every op
# in eager), which an element that cancels inherits at the magnitude of its peers.
ROUND_ULPS = 4.0
# K(n) = ACC_ULPS * MANY_PEERS / n within [ACC_ULPS, ACC_ULPS_ONE], in eps(acc(D)): another evaluation
# order's accumulated rounding (FMA contraction, vectorised exp/tanh, another order of a well-conditioned
# sum); a scalar's 2**20-term vectorised sum is up to ~500 eps off fp64 on a CPU. On CUDA (Triton's
# libdevice tanh/erf/exp, cuDNN's conv algorithms) float32 mish, GELU, GLU and conv3d outputs reached
# 1.05x of the bound with 16 and 512 (CUDA corpus campaign, 2026-11-23); 128 and 4096 leave 8x headroom
# and stay ~7x tighter than Dynamo's own accuracy check (1e-4).
ACC_ULPS = 128.0
ACC_ULPS_ONE = 4096.0
# No independent reference (rule 6): K(n) is this many times the above, and at least ACC_ULPS_NOREF
# (float64 programs on a CPU: layer_norm of mean 100 x std needs ~800 eps; a sum of 2**16 in 4 outputs ~400).
NOREF_ACC_FACTOR = 8.0
ACC_ULPS_NOREF = 1024.0

# ----------------------------------------------------------------------------------------------
# the conditioning term S of rule 1 (numerics.sensitivity; the runs: runs.py)

# The perturbed fp64 runs scale every floating input by (1 + SENS_DELTA r), r uniform in [-1, 1]: small
# enough to stay first-order, large enough to survive float64's rounding.
SENS_DELTA = 1e-9
# Two draws (S is the larger): one may move a cancelling pair of terms by nearly the same amount.
SENS_DRAWS = 2
# A pair counts where its + and - changes mirror (|d+ + d-| <= SENS_SMOOTH (|d+| + |d-|)), or, for the
# Monte Carlo runs, where neither change is under SENS_SMOOTH times the other: a step (floor division,
# a comparison) moves one side only and is no reason to widen.
SENS_SMOOTH = 0.25
# The bound grows by SENS_MULT S: the roundings of D inside the program, each up to one eps, add up.
SENS_MULT = 16.0
# The Monte Carlo and walk runs are weighed like rounding (ROUND_ULPS), not like S: they are the
# roundings' own effect (at SENS_MULT a bfloat16 program's bound reached 9%).
ROUNDING_RUN_WEIGHT = ROUND_ULPS / SENS_MULT
# An fp64 run that rounds its data to float32 or coarser inside (x.float()) would round a move of 1e-9
# away: its inputs move by this many eps of that dtype instead (a float32 mean over a row whose terms
# cancel, after a float64 round trip: CUDA corpus, reduce_mean_spatial's variants).
SENS_CAST_ULPS = 8.0
# The walk's second pair moves by this share of the first: a change that halves with the moves is the
# roundings' own (smooth functions and kinks are positively homogeneous), a step's jump stays whole.
WALK_HALF = 0.5
# ... within this share of half the first pair's change (a max-pool of four adds that are 0 eagerly
# moves by the largest positive move in one run and a smaller one in the other: no mirror, but halves).
WALK_LINEAR = 0.25

# ----------------------------------------------------------------------------------------------
# NaN, infinity, overflow (rules 2, 3, 8)

# A non-finite compiled value where eager and fp64 are finite is an overflow in another order where
# |fp64| or |eager| is within this factor of D's largest finite value: eager's own value at the edge of the
# range (a sum whose partial sums reach it in another order). Elsewhere only eager's own overflow on the
# element's path excuses it (origins.EagerOrigins), or its own partial results at the edge (EDGE_FACTOR): a
# compiled float32 accumulator that overflows where eager's does not (std of float32 data at 1e30) is a bug.
OVERFLOW_MARGIN = 16.0
# ... and where the partial results of an accumulating op of eager's own on the element's path (a sum's,
# mean's or cumsum's terms of one sign added up, a product's or cumprod's factors above 1 multiplied, a
# matmul's or convolution's products of one sign added up, a variance's or normalization's data sums) reach
# 1 / EDGE_FACTOR of the largest value of the dtype they accumulate in (origins.EagerOrigins, finite.edge-of-range):
# two binades below the overflow, where one more doubling passes it (two like partials combined in a blocked
# or tree order, a mean's or addmm's scale applied after the sum instead of before it), so that which order
# overflows is a property of floating point, not of the compiler. It is far above real bugs of this shape:
# std of float32 data at 1e30 has data sums of 6e31 (5e6 times below float32's max) where Inductor's float32
# squares overflow; row sums of 32 terms at 1e35 reach 3e36 (1/100 of the max).
EDGE_FACTOR = 4.0

# ----------------------------------------------------------------------------------------------
# indices, sorts, input sets

# A compiled index may select a value within this many eps (of the largest magnitude of the row it
# selects from) of eager's selected value: compiled computes the source itself and may round it
# differently; an exact tie is always accepted.
NEAR_TIE_ULPS = 2.0
# The most rotations of the groups of tied sort keys (rule 9): a group of up to TIE_ROTATIONS + 1 keys
# has each member at each of its positions in one run; a larger group is seen through that many (each
# run costs one more fp64 run of the program).
TIE_ROTATIONS = 7
# The share of elements of a non-parameter tensor replaced by special values in "special" input sets
# (at least one element of every non-empty tensor): enough to reach every row of a small tensor.
SPECIAL_FRACTION = 0.1
# Integer tensors whose values all lie in [0, INDEX_LIKE_MAX) (apart from one negative sentinel such as
# an ignore_index of -100) are taken for indices: their special values are the ends of the observed
# range rather than iinfo extremes, so that they stay valid indices.
INDEX_LIKE_MAX = 2**24

# ----------------------------------------------------------------------------------------------
# allclose-style tolerances (the lenient sweep rule and reports; the oracle's own rule is rule 1)

# rtol = atol by dtype, as torch.testing's and Dynamo's accuracy checks use them.
ALLCLOSE_TOL = {torch.float64: 1e-7, torch.float32: 1e-4, torch.float16: 1e-3, torch.bfloat16: 1.6e-2}
# float8 variants: about two of their ulps.
FLOAT8_TOL = 0.25
# The lenient sweep rule: "close" to the float32 or float64 program's value (a bfloat16 value is within
# 4e-2 of the exact one after a few roundings).
LOOSE_TOL = 4e-2

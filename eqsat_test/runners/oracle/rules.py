"""The oracle's rules as one table of data: id, what each convicts or clears, why, the PyTorch behaviour it follows, its test (engine.py applies them; docs/oracle.md shows this table, printed by markdown())."""
from __future__ import annotations

from dataclasses import dataclass

CONVICTS = "convicts"  # charges elements with a failure
CLEARS = "clears"  # takes elements out of a charge (or out of judgement): not judged, a note
NOTES = "notes"  # says something of elements that pass; clears nothing

# Where a rule applies, in this order within a scope (engine.apply runs a scope's rules top to bottom):
OUTPUT = "output"  # the whole output, before its leaves (judge.judge)
VARIES = "varies"  # a leaf of an output whose two eager runs differ (judge.judge)
FLOAT = "float"  # a floating leaf, per element (float_rules.py)
TENSOR = "tensor"  # a tensor leaf as a whole (judge._judge_leaf)
EXACT = "exact"  # an integer or bool leaf (exact.judge_exact)
INDEX = "index"  # an index leaf (exact.judge_index)
RETRY = "retry"  # a failing verdict judged again with eager's value where the order of ties decides (reference.conditioned)
LENIENT = "lenient"  # a failing leaf at a low-precision sweep point with a discontinuous op (judge.judge's lenient: lenient.py)
TRAINING = "training"  # a training step's verdict (forward and gradients: grad.random_stream)

TESTS = "tests/unit/runners/oracle/test_rules.py"
REAL_BUGS = "tests/unit/runners/oracle/test_real_bugs.py"  # per clearing rule, a real bug's shape it must not clear


@dataclass(frozen=True)
class OracleRule:
    """One row of the table."""

    id: str
    scope: str  # OUTPUT | VARIES | FLOAT | TENSOR | EXACT | INDEX | RETRY | LENIENT | TRAINING
    effect: str  # CONVICTS | CLEARS | NOTES
    rule: str  # the numbered rule of docs/oracle.md it belongs to
    what: str  # the elements it convicts, clears or notes
    why: str
    follows: str  # the PyTorch behaviour (or numerical fact) it follows
    test: str  # the test that shows one element it clears (or convicts) and one it must not
    charges: tuple[str, ...] = ()  # CLEARS: the convicting rules of its scope whose elements it may clear
    note_group: str | None = None  # rules whose notes a verdict reports as one (their counts summed)
    # CLEARS: the test of a real bug of the shape this rule clears (eager and fp64 agree, compiled differs)
    # that it must not clear
    must_not_clear: str = ""


_KIND = ("kind.special", "kind.eager-right-overflow")

RULES: tuple[OracleRule, ...] = (
    # ------------------------------------------------------------------------------------------ output
    OracleRule(
        "output.nondeterministic", OUTPUT, CLEARS, "7",
        "where two eager runs differ (NaN == NaN) and the eager run's record is missing or their structures differ: "
        "the whole output, not judged: `nondeterministic` (with the record, leaf by leaf: varies.*)",
        "a program that draws random numbers has no one right output to compare with",
        "dropout and other random ops draw anew on each call; compiled code draws in another order",
        f"{TESTS}::test_output_nondeterministic",
        must_not_clear=f"{REAL_BUGS}::test_a_leaf_without_a_random_draw_is_judged_beside_a_random_one"),
    OracleRule(
        "output.structure", OUTPUT, CONVICTS, "4",
        "an output whose containers, leaf types, shapes or dtypes differ from eager's: `structure-mismatch`",
        "a compiled program returns what its eager program returns, exactly",
        "torch.compile preserves the output pytree, shapes and dtypes",
        f"{TESTS}::test_output_structure"),
    # ------------------------------------------------------------------------------------------ leaves that vary
    OracleRule(
        "varies.non-finite", VARIES, CONVICTS, "7",
        "a floating leaf whose two eager runs differ without a random draw (the eager run's record): a non-finite c "
        "where both eager runs and f are finite",
        "a nondeterministic kernel (atomics) reorders sums; it makes no NaN/inf of finite values",
        "no evaluation order is specified; every order of finite terms within the range is finite",
        f"{TESTS}::test_varies_non_finite"),
    OracleRule(
        "varies.own-overflow", VARIES, CLEARS, "8",
        "an element that depends on an intermediate eager itself overflowed, or whose compiled value another order "
        "of eager's own partial results at the edge of the range gives (the eager run's record, as "
        "finite.beyond-range and finite.edge-of-range)",
        "eager's finite values are luck there, not a reference",
        "no order of a reduction's terms is specified",
        f"{TESTS}::test_varies_own_overflow", ("varies.non-finite",),
        must_not_clear=f"{REAL_BUGS}::test_a_nan_beside_an_overflow_of_a_leaf_whose_eager_runs_differ"),
    OracleRule(
        "varies.set-aside", VARIES, CLEARS, "7",
        "where two eager runs differ, with the eager run's record: each leaf that depends on a random draw (an op "
        "tagged nondeterministic_seeded, or torch.empty), or that differs without one and is charged with nothing: "
        "the elements where c differs from e, not judged: `nondeterministic`",
        "a program that draws random numbers has no one right output to compare with; its other leaves have",
        "dropout and other random ops draw anew on each call; compiled code draws in another order",
        f"{TESTS}::test_varies_set_aside",
        must_not_clear=f"{REAL_BUGS}::test_a_leaf_without_a_random_draw_is_judged_beside_a_random_one"),
    # ------------------------------------------------------------------------------------------ float: NaN/inf
    OracleRule(
        "kind.special", FLOAT, CONVICTS, "3",
        "f NaN or +-inf: c without f's kind where e has it, or without e's or f's kind where e's differs",
        "a NaN stays NaN and an infinity keeps its sign; where eager and fp64 disagree either may be right",
        "IEEE 754 special values propagate the same through any evaluation order",
        f"{TESTS}::test_kind_special"),
    OracleRule(
        "kind.no-independent-run", FLOAT, CLEARS, "3",
        "no independent fp64 run (none, a float64 leaf's, or one that rounds to D or coarser inside), e NaN/inf "
        "of eager's own overflow (the eager run's record): a finite c with |c| >= sqrt(D's max) or on a special "
        "set, and on a special set a c of another non-finite kind",
        "eager's intermediates (a square, a variance) overflowed, and nothing says which is right; a NaN/inf "
        "eager carried in from its inputs is no overflow",
        "compiled code keeps intermediates in float32 where eager rounds to bfloat16 (emulate_precision_casts "
        "off), and reorders a float64 sum near 1.8e308",
        f"{TESTS}::test_kind_no_independent_run", _KIND[:1],
        must_not_clear=f"{REAL_BUGS}::test_a_float64_nan_of_an_input_turned_finite_on_a_special_set"),
    OracleRule(
        "kind.nan-beyond-float64", FLOAT, CLEARS, "8",
        "f NaN that depends on a value beyond float64's range (the fp64 run's own overflow, then inf * 0) or on "
        "a conversion of NaN/inf to an integer: any c",
        "the fp64 run's NaN is then no judge: the exact value may be finite",
        "C++ leaves a float-to-integer conversion of NaN/inf undefined (grid_sampler_2d's decomposition floors "
        "a NaN coordinate into an index; pytorch/pytorch#24823)",
        f"{TESTS}::test_kind_nan_beyond_float64", _KIND[:1],
        must_not_clear=f"{REAL_BUGS}::test_a_nan_of_an_input_beside_the_fp64_runs_own_overflow"),
    OracleRule(
        "kind.eager-right-overflow", FLOAT, CONVICTS, "2",
        "f finite beyond D's range and e the infinity it rounds to: a non-finite c other than that infinity",
        "eager is right there: the exact value overflows D",
        "rounding to a floating dtype maps a value beyond its range to the infinity of its sign",
        f"{TESTS}::test_kind_eager_right_overflow"),
    OracleRule(
        "kind.overflow-order-special", FLOAT, CLEARS, "3",
        "on a special set, a NaN c where e is the infinity f is or rounds to, that infinity eager's own overflow "
        "(the eager run's record)",
        "finite terms near the range overflow to +inf and -inf in another order, and inf - inf is NaN",
        "no summation order is specified for reductions and scans (Triton's blocked order is not eager's)",
        f"{TESTS}::test_kind_overflow_order_special", _KIND,
        must_not_clear=f"{REAL_BUGS}::test_nan_for_an_input_infinity_beside_huge_values"),
    OracleRule(
        "kind.nan-beyond-range", FLOAT, CLEARS, "8",
        "a NaN c where f is an infinity and the element depends on a value beyond acc(D)'s range in some order "
        "of a reduction's terms (terms of one sign count only where no infinity of that sign is among them)",
        "a reduction's finite terms under- or overflow first in that order: 0 * inf, inf - inf",
        "no order of a reduction's terms is specified",
        f"{TESTS}::test_kind_nan_beyond_range", _KIND,
        must_not_clear=f"{REAL_BUGS}::test_nan_for_an_infinity_summed_with_huge_terms_of_its_sign"),
    OracleRule(
        "kind.other-rounding", FLOAT, CLEARS, "3",
        "a NaN/inf c of another kind than f where an fp64 run under another rounding of the intermediates "
        "(Monte Carlo, walk, flushed subnormals, kept precision) gives that NaN/inf too, or gives another kind than f",
        "the element's kind depends on the order of its roundings (a cancellation to exactly 0 times an infinity; "
        "the log of a cancellation whose sign a rounding flips)",
        "no order of a reduction's terms is specified; Triton flushes subnormals",
        f"{TESTS}::test_kind_other_rounding", _KIND,
        must_not_clear=f"{REAL_BUGS}::test_an_infinity_of_another_sign_no_rounding_gives"),
    # ------------------------------------------------------------------------------------------ float: finite e and f
    OracleRule(
        "finite.non-finite", FLOAT, CONVICTS, "1",
        "e and f finite: a non-finite c, unless it is the infinity f rounds to",
        "a finite exact value that eager computes in D needs no NaN/inf",
        "compiled code computes the same function",
        f"{TESTS}::test_finite_non_finite"),
    OracleRule(
        "finite.overflow-order", FLOAT, CLEARS, "3",
        "an infinite c of the sign of e or f where |e| or |f| is within OVERFLOW_MARGIN of D's max (eager's own "
        "value at the edge of the range; a NaN needs infinities of both signs: finite.beyond-range)",
        "an overflow in another order: a result at the edge of the range passes it in another order of its "
        "roundings or partial sums",
        "no evaluation order is specified",
        f"{TESTS}::test_finite_overflow_order", ("finite.non-finite",),
        must_not_clear=f"{REAL_BUGS}::test_nan_beside_an_element_eager_overflowed"),
    OracleRule(
        "finite.beyond-range", FLOAT, CLEARS, "8",
        "a non-finite c at an element that depends on an intermediate eager itself overflowed (the eager run's "
        "record: an infinity an op made of finite operands, a kernel's finite result far from the op's in float64, "
        "a conversion of NaN/inf to an integer)",
        "eager's finite value is luck there, not a reference; where eager did not overflow, a compiled overflow is "
        "compiled's own (a float32 accumulator where eager's is wider, or another order)",
        "eager's overflow in one order is no reference for another; eager's CPU reductions of float32 accumulate "
        "in double, Inductor's in float32",
        f"{TESTS}::test_finite_beyond_range", ("finite.non-finite",),
        must_not_clear=f"{REAL_BUGS}::test_std_of_float32_data_at_1e30"),
    OracleRule(
        "finite.edge-of-range", FLOAT, CLEARS, "8",
        "a non-finite c at an element that depends on partial results of an accumulating op of eager's own (a "
        "sum, product, cumsum, cumprod, matmul, convolution, variance or normalization) that reach EDGE_FACTOR "
        "of the range in some order of its terms (the eager run's record): at the op's own result an infinity "
        "of a sign its partials reach, NaN where they reach both or a product holds a zero; after a further op, "
        "any",
        "where the true partial results come within a small factor of the largest value, which order overflows "
        "is a property of floating point, not of the compiler; eager's own order staying in range is luck",
        "no order of a reduction's or scan's terms is specified (Triton's blocked scan and reductions are not "
        "eager's order)",
        f"{TESTS}::test_finite_edge_of_range", ("finite.non-finite",),
        must_not_clear=f"{REAL_BUGS}::test_an_overflow_where_the_partial_sums_stay_far_from_the_range"),
    OracleRule(
        "eager.overflow", FLOAT, CLEARS, "2",
        "e NaN/inf where f is finite and not beyond D's range: any c (both wrong; a note)",
        "eager overflowed, so neither it nor a compiled value of either kind can be convicted by it",
        "an accumulator that overflows in one order may not in another",
        f"{TESTS}::test_eager_overflow",
        must_not_clear=f"{REAL_BUGS}::test_a_wrong_row_beside_a_row_eager_overflowed"),
    # ------------------------------------------------------------------------------------------ float: the bound
    OracleRule(
        "finite.bound", FLOAT, CONVICTS, "1, 6",
        "finite c, f (e finite, or the infinity f rounds to): |c - f| beyond M(n) yard + 4 (ulp(f) + eps(D) typ) "
        "+ K(n) eps(acc(D)) (|f| + typ) + tiny(D); without an independent reference |c - e| with yard 0 and "
        "K = max(1024, 8 K(n))",
        "eager's own error to fp64 is the yardstick: another order of the same roundings errs by a multiple of it",
        "compiled code may reorder sums, contract FMAs, vectorise libm and keep intermediates in acc(D); "
        "Triton flushes subnormals (tiny(D))",
        f"{TESTS}::test_finite_bound"),
    OracleRule(
        "bound.perturbed-inputs", FLOAT, CLEARS, "1 (S a)",
        "c within the bound widened by 16 S, S: fp64's change when the inputs move by one rounding of D "
        "(two antithetic draws, where + and - mirror)",
        "a sum whose terms cancel comes out otherwise in another order: its error is eps times the terms",
        "no summation order is specified",
        f"{TESTS}::test_bound_perturbed_inputs", ("finite.bound",),
        must_not_clear=f"{REAL_BUGS}::test_a_cancelling_sum_that_drops_a_term"),
    OracleRule(
        "bound.monte-carlo", FLOAT, CLEARS, "1 (S b)",
        "c within the bound widened further by 4/16 of the Monte Carlo runs' change (every rounded intermediate "
        "moved by up to one rounding of D), or its q75 over the peers",
        "a cancellation after a rounded intermediate inherits that rounding (1 + erf(x) near x = -3.7)",
        "compiled libm (Triton's erf, tanh) may differ from eager's by an ulp",
        f"{TESTS}::test_bound_monte_carlo", ("finite.bound",),
        must_not_clear=f"{REAL_BUGS}::test_gelu_off_by_a_thousandth"),
    OracleRule(
        "bound.walk", FLOAT, CLEARS, "1 (S b')",
        "c within the bound widened further by 4/16 of the walk runs' change at the element (each sum-like "
        "reduction moved by its partial sums' random walk, each add by its operands' rounding), where it halves "
        "when the moves halve",
        "a result whose large terms cancel has large partial sums its own rounding never sees",
        "no summation order is specified; Inductor keeps a cast's precision at some reads (emulate_precision_casts off)",
        f"{TESTS}::test_bound_walk", ("finite.bound",),
        must_not_clear=f"{REAL_BUGS}::test_a_cumsum_that_restarts_in_a_cancelling_row"),
    OracleRule(
        "bound.rounding-step", FLOAT, CLEARS, "1 (S b)",
        "c beyond the bound but within the bound of a Monte Carlo or walk run that itself jumps beyond the bound",
        "a step (a threshold, a comparison) that another rounding crosses decides the element, not the compiler",
        "compiled code rounds intermediates differently (FMA contraction, kept precision)",
        f"{TESTS}::test_bound_rounding_step", ("finite.bound",), "other-run",
        must_not_clear=f"{REAL_BUGS}::test_a_floor_off_by_one_away_from_its_step"),
    OracleRule(
        "bound.flushed-subnormals", FLOAT, CLEARS, "1 (S c)",
        "c beyond the bound but within the bound of the fp64 run on inputs with D's subnormals flushed to zero",
        "a subnormal flushed to zero is no miscompile",
        "Triton flushes subnormals to zero by default",
        f"{TESTS}::test_bound_flushed_subnormals", ("finite.bound",), "other-run",
        must_not_clear=f"{REAL_BUGS}::test_a_normal_value_flushed_beside_a_subnormal"),
    OracleRule(
        "bound.kept-precision", FLOAT, CLEARS, "1 (S c)",
        "c beyond the bound but within the bound of the fp64 run in which each cast to a coarser dtype rounds "
        "once and the ops after it keep the precision",
        "compiled code keeps a cast's precision where eager rounds after every op",
        "Inductor's documented default, `emulate_precision_casts` off",
        f"{TESTS}::test_bound_kept_precision", ("finite.bound",), "other-run",
        must_not_clear=f"{REAL_BUGS}::test_a_value_off_beyond_the_cast_it_keeps"),
    OracleRule(
        "bound.beyond-range", FLOAT, CLEARS, "8",
        "c beyond the bound at an element that depends on an intermediate eager itself overflowed (the eager "
        "run's record, as finite.beyond-range)",
        "eager's finite value is luck there, not a reference; where eager did not overflow, compiled's is its own",
        "eager's overflow in one order is no reference for another",
        f"{TESTS}::test_bound_beyond_range", ("finite.bound",),
        must_not_clear=f"{REAL_BUGS}::test_a_normalization_by_std_at_1e30"),
    OracleRule(
        "bound.edge-of-range", FLOAT, CLEARS, "8",
        "c beyond the bound at an element that depends, through a further op, on partial results of an "
        "accumulating op of eager's own that reach EDGE_FACTOR of the range (the eager run's record, as "
        "finite.edge-of-range), or on a product's that fall below the smallest normal number (as "
        "product.underflow-order)",
        "an overflow of those partials in another order reaches the element as any value (NaN > 0 is False: "
        "where(s > 0, s, 0) gives 0; x / inf is 0)",
        "no order of a reduction's or scan's terms is specified",
        f"{TESTS}::test_bound_edge_of_range", ("finite.bound",),
        must_not_clear=f"{REAL_BUGS}::test_a_value_after_a_sum_that_stays_far_from_the_range"),
    OracleRule(
        "product.underflow-order", FLOAT, CLEARS, "8",
        "an element of a product's or cumprod's own result (or a cast or copy of it) whose factors' partial products "
        "fall below the smallest normal number of the dtype it accumulates in, in some order of its factors (the "
        "eager run's record): a c that differs from e and is a value such an order gives: 0, the exact product "
        "within n (eps(acc) + eps(D) + s / (2 P)) of it (P the smallest partial product, s the subnormal "
        "spacing; at most all of it: between 0 and twice the product), of the product's sign; NaN where an "
        "infinity among the factors or partials beyond the range (finite.edge-of-range) meet a partial flushed "
        "to 0; the infinity of the product where one is among the factors; whatever the charge (kind.special, "
        "finite.non-finite, finite.bound)",
        "which order of the factors underflows is a property of floating point, not of the compiler: eager's "
        "order may flush a partial to 0 where the exact product is representable, or keep one that another order "
        "flushes (a subnormal partial keeps few bits, and Triton flushes it); eager's value is luck there, and "
        "a float64 program has no wider run to judge it",
        "no order of a reduction's or scan's factors is specified (Inductor's vectorized lanes and Triton's "
        "blocks multiply in other orders; Triton flushes subnormals to zero)",
        f"{TESTS}::test_product_underflow_order",
        ("kind.special", "kind.eager-right-overflow", "finite.non-finite", "finite.bound"),
        must_not_clear=f"{REAL_BUGS}::test_a_wrong_product_whose_factors_stay_in_range"),
    OracleRule(
        "note.signed-zero", FLOAT, NOTES, "notes",
        "c a zero of the other sign where e and f are the same zero (a note on a passing leaf)",
        "IEEE zeros compare equal; only 1/x, atan2, copysign and signbit see the sign",
        "torch.testing and Dynamo's accuracy check compare -0 == 0",
        f"{TESTS}::test_note_signed_zero"),
    # ------------------------------------------------------------------------------------------ tensor leaves
    OracleRule(
        "note.strides", TENSOR, NOTES, "notes",
        "a passing tensor leaf whose strides differ from eager's (a note)",
        "values do not depend on strides",
        "torch._dynamo.utils.same does not compare strides; Inductor keeps eager's output strides by default "
        "(keep_output_stride)",
        f"{TESTS}::test_note_strides"),
    # ------------------------------------------------------------------------------------------ integers, bools, indices
    OracleRule(
        "exact.differs", EXACT, CONVICTS, "4",
        "an integer or bool element (or a Python int, bool or other value) that differs from eager's",
        "integers and bools are exact",
        "integer arithmetic is exact in every order",
        f"{TESTS}::test_exact_differs"),
    OracleRule(
        "exact.beyond-range", EXACT, CLEARS, "8",
        "an integer or bool element that depends on an intermediate eager itself overflowed, on a conversion "
        "of NaN, an infinity or an out-of-range float to an integer or on the sign bit of a NaN an op made (the "
        "eager run's record: through any op after it, a reduction over such values too, where one more of each "
        "or the dtype's extremes change it), or on one the fp64 run made (marks 2)",
        "eager's value is luck there (a comparison of an overflowed sum; C++ leaves such a conversion undefined; "
        "IEEE 754 leaves the sign of a NaN result unspecified)",
        "eager's overflow in one order is no reference for another",
        f"{TESTS}::test_exact_beyond_range", ("exact.differs",),
        must_not_clear=f"{REAL_BUGS}::test_a_comparison_of_std_at_1e30"),
    OracleRule(
        "exact.edge-of-range", EXACT, CLEARS, "8",
        "an integer or bool element that depends on partial results of an accumulating op of eager's own that "
        "reach EDGE_FACTOR of the range (the eager run's record, as finite.edge-of-range), or on a product's that "
        "fall below the smallest normal number (as product.underflow-order)",
        "an overflow of those partials in another order decides a comparison of them (NaN > 0 is False)",
        "no order of a reduction's or scan's terms is specified",
        f"{TESTS}::test_exact_edge_of_range", ("exact.differs",),
        must_not_clear=f"{REAL_BUGS}::test_a_comparison_of_a_sum_that_stays_far_from_the_range"),
    OracleRule(
        "exact.between-runs", EXACT, CLEARS, "4",
        "an integer or bool element between eager's value and an fp64 run's (as is, Monte Carlo, walk, alternatives; "
        "the Monte Carlo runs read a float within rounding of 0 as 0 and across it where a test against 0 reads it: "
        "a cast to bool, a comparison with 0)",
        "a count or a test decided by rounding (nonzeros of x*x - x*x; linspace(-3, 3, 15)'s middle value, "
        "exactly 0, cast to bool) is not decided by the compiler",
        "Triton contracts x*x - x*x into an FMA, leaving residuals of 1e-8; Inductor computes linspace's values "
        "by another formula than eager's",
        f"{TESTS}::test_exact_between_runs", ("exact.differs",),
        must_not_clear=f"{REAL_BUGS}::test_a_count_off_where_no_run_moves"),
    OracleRule(
        "index.differs", INDEX, CONVICTS, "4",
        "an index (argmax, topk, sort: index_info) that differs from eager's: out of range, repeating along dim, "
        "or selecting another value of eager's source",
        "an index is right when it selects the right value",
        "argmax and topk of ties may pick any of them",
        f"{TESTS}::test_index_differs"),
    OracleRule(
        "index.tie", INDEX, CLEARS, "4",
        "an index that selects a value equal to eager's selected value, or within 2 eps of the row's largest "
        "magnitude among its values at most PEER_RANGE times the selected ones",
        "compiled computes the source itself and may round it differently; ties may break either way",
        "torch.argmax/topk of ties return any one; Inductor's reductions break ties by their own order",
        f"{TESTS}::test_index_tie", ("index.differs",),
        must_not_clear=f"{REAL_BUGS}::test_argmax_beside_a_masked_logit"),
    # ------------------------------------------------------------------------------------------ a failing leaf, again
    OracleRule(
        "lenient.wider-run", LENIENT, CLEARS, "sweeps",
        "at a float16/bfloat16 sweep point of a program with a discontinuous op, in a leaf that fails: elements "
        "where c differs from eager but agrees with the float32 or float64 program, from which eager itself differs "
        "there, take c's value before the leaf is judged again",
        "low-precision rounding before a floor or comparison moves the step; the wider program shows which "
        "side is right",
        "compiled code keeps float32 intermediates where eager rounds to float16/bfloat16",
        f"{TESTS}::test_lenient_wider_run",
        must_not_clear=f"{REAL_BUGS}::test_a_low_precision_value_off_where_eager_agrees_with_the_wider_program"),
    # ------------------------------------------------------------------------------------------ a failing verdict, again
    OracleRule(
        "ties.sort-order", RETRY, CLEARS, "9",
        "where the program sorts: elements that differ between the fp64 runs with ties in index order and "
        "rotated within each group, where compiled is of the kind of one of them (finite, NaN, that infinity), "
        "take eager's value before judging again",
        "the order of tied keys is left open",
        "torch.sort without stable=True, topk and Triton's sort leave the order of ties open",
        f"{TESTS}::test_ties_sort_order",
        must_not_clear=f"{REAL_BUGS}::test_a_nan_gathered_by_a_sort_with_ties"),
    # ------------------------------------------------------------------------------------------ training mode
    OracleRule(
        "training.random-stream", TRAINING, CLEARS, "7",
        "training mode (--grad), a program that draws random numbers, reseeded before each step: a verdict whose "
        "compiled forward outputs disagree with eager's, gradients and all: `nondeterministic`, not judged; not "
        "where a failing leaf depends on no random draw (the eager run's record)",
        "the compiled code drew other numbers (another dropout mask): no one right output or gradient to compare "
        "with; where the outputs agree, the draws did, and the gradients are judged",
        "Inductor draws with eager's generator only under fallback_random (training mode sets it); a backend of "
        "one's own may draw in another order",
        f"{TESTS}::test_training_random_stream",
        must_not_clear=f"{REAL_BUGS}::test_a_deterministic_output_of_a_random_training_step"),
)

BY_ID: dict[str, OracleRule] = {r.id: r for r in RULES}
assert len(BY_ID) == len(RULES), "rule ids must be unique"


def in_scope(scope: str) -> tuple[OracleRule, ...]:
    """The rules of one scope, in the order they apply."""
    return tuple(r for r in RULES if r.scope == scope)


def markdown() -> str:
    """The table as docs/oracle.md shows it (`python -m eqsat_test.runners.oracle.rules` prints it)."""
    cell = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = ["| id | effect | rule | what it convicts, clears or notes | why | the PyTorch behaviour it follows | test "
             "| the real bug it must not clear |",
             "|---|---|---|---|---|---|---|---|"]
    for r in RULES:
        guard = f"`{r.must_not_clear.split('::')[1]}`" if r.must_not_clear else ""
        lines.append(f"| `{r.id}` | {r.effect} | {r.rule} | {cell(r.what)} | {cell(r.why)} | {cell(r.follows)} | "
                     f"`{r.test.split('::')[1]}` | {guard} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")

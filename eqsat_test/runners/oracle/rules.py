"""The oracle's rules as one table of data: id, what each convicts or clears, why, the PyTorch behaviour it follows, its test (engine.py applies them; docs/oracle.md shows this table, printed by markdown())."""
from __future__ import annotations

from dataclasses import dataclass

CONVICTS = "convicts"  # charges elements with a failure
CLEARS = "clears"  # takes elements out of a charge (or out of judgement): not judged, a note
NOTES = "notes"  # says something of elements that pass; clears nothing

# Where a rule applies, in this order within a scope (engine.apply runs a scope's rules top to bottom):
OUTPUT = "output"  # the whole output, before its leaves (judge.judge)
FLOAT = "float"  # a floating leaf, per element (float_rules.py)
TENSOR = "tensor"  # a tensor leaf as a whole (judge._judge_leaf)
EXACT = "exact"  # an integer or bool leaf (exact.judge_exact)
INDEX = "index"  # an index leaf (exact.judge_index)
RETRY = "retry"  # a failing verdict judged again with eager's value where the order of ties decides (reference.conditioned)
LENIENT = "lenient"  # the sweep's low-precision points with a discontinuous op (lenient.lenient_judge)

TESTS = "tests/unit/runners/oracle/test_rules.py"


@dataclass(frozen=True)
class OracleRule:
    """One row of the table."""

    id: str
    scope: str  # OUTPUT | FLOAT | TENSOR | EXACT | INDEX | RETRY | LENIENT
    effect: str  # CONVICTS | CLEARS | NOTES
    rule: str  # the numbered rule of docs/oracle.md it belongs to
    what: str  # the elements it convicts, clears or notes
    why: str
    follows: str  # the PyTorch behaviour (or numerical fact) it follows
    test: str  # the test that shows one element it clears (or convicts) and one it must not
    charges: tuple[str, ...] = ()  # CLEARS: the convicting rules of its scope whose elements it may clear
    note_group: str | None = None  # rules whose notes a verdict reports as one (their counts summed)


_KIND = ("kind.special", "kind.eager-right-overflow")

RULES: tuple[OracleRule, ...] = (
    # ------------------------------------------------------------------------------------------ output
    OracleRule(
        "output.nondeterministic", OUTPUT, CLEARS, "7",
        "every element of an output whose two eager runs differ (NaN == NaN): `nondeterministic`, not judged",
        "a program that draws random numbers has no one right output to compare with",
        "dropout and other random ops draw anew on each call; compiled code draws in another order",
        f"{TESTS}::test_output_nondeterministic"),
    OracleRule(
        "output.structure", OUTPUT, CONVICTS, "4",
        "an output whose containers, leaf types, shapes or dtypes differ from eager's: `structure-mismatch`",
        "a compiled program returns what its eager program returns, exactly",
        "torch.compile preserves the output pytree, shapes and dtypes",
        f"{TESTS}::test_output_structure"),
    # ------------------------------------------------------------------------------------------ float: NaN/inf
    OracleRule(
        "kind.special", FLOAT, CONVICTS, "3",
        "f NaN or +-inf: c without f's kind where e has it, or without e's or f's kind where e's differs",
        "a NaN stays NaN and an infinity keeps its sign; where eager and fp64 disagree either may be right",
        "IEEE 754 special values propagate the same through any evaluation order",
        f"{TESTS}::test_kind_special"),
    OracleRule(
        "kind.no-independent-run", FLOAT, CLEARS, "3",
        "no independent fp64 run (none, a float64 leaf's, or one that rounds to D or coarser inside): a finite "
        "c where e is NaN/inf with |c| >= sqrt(D's max) or on a special set, and on a special set a c of "
        "another non-finite kind",
        "eager's intermediates (a square, a variance) may have overflowed, and nothing says which is right",
        "compiled code keeps intermediates in float32 where eager rounds to bfloat16 (emulate_precision_casts "
        "off), and reorders a float64 sum near 1.8e308",
        f"{TESTS}::test_kind_no_independent_run", _KIND[:1]),
    OracleRule(
        "kind.nan-beyond-float64", FLOAT, CLEARS, "8",
        "f NaN that depends on a value beyond float64's range (the fp64 run's own overflow, then inf * 0) or on "
        "a conversion of NaN/inf to an integer: any c",
        "the fp64 run's NaN is then no judge: the exact value may be finite",
        "C++ leaves a float-to-integer conversion of NaN/inf undefined (grid_sampler_2d's decomposition floors "
        "a NaN coordinate into an index; pytorch/pytorch#24823)",
        f"{TESTS}::test_kind_nan_beyond_float64", _KIND[:1]),
    OracleRule(
        "kind.eager-right-overflow", FLOAT, CONVICTS, "2",
        "f finite beyond D's range and e the infinity it rounds to: a non-finite c other than that infinity",
        "eager is right there: the exact value overflows D",
        "rounding to a floating dtype maps a value beyond its range to the infinity of its sign",
        f"{TESTS}::test_kind_eager_right_overflow"),
    OracleRule(
        "kind.overflow-order-special", FLOAT, CLEARS, "3",
        "on a special set, a NaN c where e is the infinity f is or rounds to, in a leaf whose finite f reach "
        "sqrt(D's max)",
        "finite terms near the range overflow to +inf and -inf in another order, and inf - inf is NaN",
        "no summation order is specified for reductions and scans (Triton's blocked order is not eager's)",
        f"{TESTS}::test_kind_overflow_order_special", _KIND),
    OracleRule(
        "kind.nan-beyond-range", FLOAT, CLEARS, "8",
        "a NaN c where f is an infinity and the element depends on a value beyond acc(D)'s range in some order "
        "of a reduction's terms",
        "a reduction's finite terms under- or overflow first in that order: 0 * inf, inf - inf",
        "no order of a reduction's terms is specified",
        f"{TESTS}::test_kind_nan_beyond_range", _KIND),
    OracleRule(
        "kind.other-rounding", FLOAT, CLEARS, "3",
        "a NaN/inf c of another kind than f where an fp64 run under another rounding of the intermediates "
        "(Monte Carlo, walk, flushed subnormals, kept precision) gives that NaN/inf too",
        "the element's kind depends on the order of its roundings (a cancellation to exactly 0 times an infinity)",
        "no order of a reduction's terms is specified; Triton flushes subnormals",
        f"{TESTS}::test_kind_other_rounding", _KIND),
    # ------------------------------------------------------------------------------------------ float: finite e and f
    OracleRule(
        "finite.non-finite", FLOAT, CONVICTS, "1",
        "e and f finite: a non-finite c, unless it is the infinity f rounds to",
        "a finite exact value that eager computes in D needs no NaN/inf",
        "compiled code computes the same function",
        f"{TESTS}::test_finite_non_finite"),
    OracleRule(
        "finite.overflow-order", FLOAT, CLEARS, "3",
        "a non-finite c where |e| or |f| is within OVERFLOW_MARGIN of D's max, or where eager or fp64 overflows "
        "in the element's row; on a special set without an independent fp64 run, any",
        "an overflow in another order: compiled's intermediates (a square, a partial sum) overflow where eager's "
        "do not",
        "no evaluation order is specified; Welford's variance (eager) and a two-pass one (compiled) overflow "
        "differently",
        f"{TESTS}::test_finite_overflow_order", ("finite.non-finite",)),
    OracleRule(
        "finite.beyond-range", FLOAT, CLEARS, "8",
        "a non-finite c at an element that depends on an intermediate beyond acc(D)'s range (Inductor's "
        "decompositions, in float64, in any order of a reduction's terms)",
        "D's arithmetic cannot hold that intermediate: eager's finite value is luck, not a reference",
        "Inductor decomposes (var_mean, layer_norm) and reorders reductions",
        f"{TESTS}::test_finite_beyond_range", ("finite.non-finite",)),
    OracleRule(
        "eager.overflow", FLOAT, CLEARS, "2",
        "e NaN/inf where f is finite and not beyond D's range: any c (both wrong; a note)",
        "eager overflowed, so neither it nor a compiled value of either kind can be convicted by it",
        "an accumulator that overflows in one order may not in another",
        f"{TESTS}::test_eager_overflow"),
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
        f"{TESTS}::test_bound_perturbed_inputs", ("finite.bound",)),
    OracleRule(
        "bound.monte-carlo", FLOAT, CLEARS, "1 (S b)",
        "c within the bound widened further by 4/16 of the Monte Carlo runs' change (every rounded intermediate "
        "moved by up to one rounding of D), or its q75 over the peers",
        "a cancellation after a rounded intermediate inherits that rounding (1 + erf(x) near x = -3.7)",
        "compiled libm (Triton's erf, tanh) may differ from eager's by an ulp",
        f"{TESTS}::test_bound_monte_carlo", ("finite.bound",)),
    OracleRule(
        "bound.walk", FLOAT, CLEARS, "1 (S b')",
        "c within the bound widened further by 4/16 of the walk runs' change at the element (each sum-like "
        "reduction moved by its partial sums' random walk, each add by its operands' rounding), where it halves "
        "when the moves halve",
        "a result whose large terms cancel has large partial sums its own rounding never sees",
        "no summation order is specified; Inductor keeps a cast's precision at some reads (emulate_precision_casts off)",
        f"{TESTS}::test_bound_walk", ("finite.bound",)),
    OracleRule(
        "bound.rounding-step", FLOAT, CLEARS, "1 (S b)",
        "c beyond the bound but within the bound of a Monte Carlo or walk run that itself jumps beyond the bound",
        "a step (a threshold, a comparison) that another rounding crosses decides the element, not the compiler",
        "compiled code rounds intermediates differently (FMA contraction, kept precision)",
        f"{TESTS}::test_bound_rounding_step", ("finite.bound",), "other-run"),
    OracleRule(
        "bound.flushed-subnormals", FLOAT, CLEARS, "1 (S c)",
        "c beyond the bound but within the bound of the fp64 run on inputs with D's subnormals flushed to zero",
        "a subnormal flushed to zero is no miscompile",
        "Triton flushes subnormals to zero by default",
        f"{TESTS}::test_bound_flushed_subnormals", ("finite.bound",), "other-run"),
    OracleRule(
        "bound.kept-precision", FLOAT, CLEARS, "1 (S c)",
        "c beyond the bound but within the bound of the fp64 run in which each cast to a coarser dtype rounds "
        "once and the ops after it keep the precision",
        "compiled code keeps a cast's precision where eager rounds after every op",
        "Inductor's documented default, `emulate_precision_casts` off",
        f"{TESTS}::test_bound_kept_precision", ("finite.bound",), "other-run"),
    OracleRule(
        "bound.beyond-range", FLOAT, CLEARS, "8",
        "c beyond the bound at an element that depends on an intermediate beyond acc(D)'s range",
        "D's arithmetic cannot hold that intermediate: eager's finite value is luck, not a reference",
        "Inductor decomposes and reorders reductions",
        f"{TESTS}::test_bound_beyond_range", ("finite.bound",)),
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
        "an integer or bool element that depends on an intermediate beyond the range of the program's dtype",
        "eager's value is luck there (a comparison of an overflowed sum)",
        "no order of a reduction's terms is specified",
        f"{TESTS}::test_exact_beyond_range", ("exact.differs",)),
    OracleRule(
        "exact.between-runs", EXACT, CLEARS, "4",
        "an integer element between eager's value and an fp64 run's (as is, Monte Carlo, walk, alternatives)",
        "a count decided by rounding (nonzeros of x*x - x*x) is not decided by the compiler",
        "Triton contracts x*x - x*x into an FMA, leaving residuals of 1e-8",
        f"{TESTS}::test_exact_between_runs", ("exact.differs",)),
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
        "magnitude",
        "compiled computes the source itself and may round it differently; ties may break either way",
        "torch.argmax/topk of ties return any one; Inductor's reductions break ties by their own order",
        f"{TESTS}::test_index_tie", ("index.differs",)),
    # ------------------------------------------------------------------------------------------ a failing verdict, again
    OracleRule(
        "ties.sort-order", RETRY, CLEARS, "9",
        "where the program sorts: elements that differ between the fp64 runs with ties in index order and "
        "rotated within each group take eager's value before judging again",
        "the order of tied keys is left open",
        "torch.sort without stable=True, topk and Triton's sort leave the order of ties open",
        f"{TESTS}::test_ties_sort_order"),
    OracleRule(
        "lenient.wider-run", LENIENT, CLEARS, "sweeps",
        "at a float16/bfloat16 sweep point of a program with a discontinuous op: elements where c differs from "
        "eager but agrees with the float32 or float64 program take c's value before judging again",
        "low-precision rounding before a floor or comparison moves the step; the wider program shows which "
        "side is right",
        "compiled code keeps float32 intermediates where eager rounds to float16/bfloat16",
        f"{TESTS}::test_lenient_wider_run"),
)

BY_ID: dict[str, OracleRule] = {r.id: r for r in RULES}
assert len(BY_ID) == len(RULES), "rule ids must be unique"


def in_scope(scope: str) -> tuple[OracleRule, ...]:
    """The rules of one scope, in the order they apply."""
    return tuple(r for r in RULES if r.scope == scope)


def markdown() -> str:
    """The table as docs/oracle.md shows it (`python -m eqsat_test.runners.oracle.rules` prints it)."""
    cell = lambda s: s.replace("|", "\\|")  # noqa: E731
    lines = ["| id | effect | rule | what it convicts, clears or notes | why | the PyTorch behaviour it follows | test |",
             "|---|---|---|---|---|---|---|"]
    for r in RULES:
        lines.append(f"| `{r.id}` | {r.effect} | {r.rule} | {cell(r.what)} | {cell(r.why)} | {cell(r.follows)} | "
                     f"`{r.test.split('::')[1]}` |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")

"""benchmarks/peer_torchfuzz.py's reading of torchfuzz's output: failure blocks parsed from its multi-process log,
signatures that cluster alike messages, and the categories that mark a signature false."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def peer():
    import sys
    sys.path.insert(0, str(BENCH))  # the script imports its neighbour `common` as a script does
    try:
        spec = importlib.util.spec_from_file_location("peer_torchfuzz", BENCH / "peer_torchfuzz.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["peer_torchfuzz"] = mod  # (its dataclasses look their module up)
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop("peer_torchfuzz", None)
        sys.path.remove(str(BENCH))


def block(seed: int, stdout: str, program_output: str | None) -> str:
    """One failing seed as torchfuzz's multi-process fuzzer prints it (each line indented by three spaces)."""
    body = ["STDOUT:", "Running single fuzz_and_execute...", f"Using seed: {seed}, max_depth: 3", "OPERATION_STATS:",
            "  arg: 2", "  torch.add: 1", "  torch.nn.functional.gelu: 2", stdout]
    if program_output is not None:
        body += [f"Running: /tmp/torchfuzz/fuzz_{seed:08x}.py", "=== Program Output (Failure) ===",
                 program_output, "===============================", "=== Program Source ===", "import torch",
                 "======================", "Program exited with code: 1"]
    body.append("Return code: 1")
    text = "\n".join(body)
    return f"❌ FAILURE - Seed {seed} (duration: 12.00s)\n" + "\n".join("   " + ln for ln in text.splitlines())


COMPILE_CRASH = """✅ eager success
Traceback (most recent call last):
  File "/tmp/torchfuzz/fuzz_1.py", line 20, in <module>
    result_compiled = compiled_program(*args)
torch._inductor.exc.InductorError: LoweringException: AssertionError: size 17 vs var_node_3 at 0x7f00aa"""

EAGER_FAILS = """Traceback (most recent call last):
  File "/tmp/torchfuzz/fuzz_2.py", line 9, in <module>
    result_original = fuzzed_program(*args)
RuntimeError: stack expects a non-empty TensorList"""


def test_same_crash_with_other_sizes_and_names_is_one_signature(peer):
    a = peer.failure_signature(block(1, "", COMPILE_CRASH).split("\n", 1)[1])
    b = peer.failure_signature(block(2, "", COMPILE_CRASH.replace("17", "33").replace("var_node_3", "var_node_9")
                                     .replace("0x7f00aa", "0x55bb")).split("\n", 1)[1])
    assert a == (a[0], "compile-crash", a[2]) and a[0] == b[0]
    assert a[0].startswith("torch._inductor.exc.InductorError: LoweringException: AssertionError: size N vs <v>")
    other = peer.failure_signature(block(3, "", COMPILE_CRASH.replace("AssertionError", "KeyError")).split("\n", 1)[1])
    assert other[0] != a[0]


def test_log_parse_counts_categories_and_false_causes(peer):
    log = "\r".join([
        "Processing seeds:   0%|   | 0/9",
        block(4, "", COMPILE_CRASH),
        "Processing seeds:  10%|   | 1/9",
        block(5, "", EAGER_FAILS),
        block(6, "\n❌ Execution failed: No operators available that can produce TensorSpec(size=(3,), stride=(1,))\n"
                 "Traceback (most recent call last):\nValueError: No operators available that can produce "
                 "TensorSpec(size=(3,), stride=(1,))\nError: No operators available", None),
        block(7, "", "Eager Success! ✅\nCompile Success! ✅\nRelative diff (sum): 9.1%\n"
                     "❌ Forward output sums differ significantly (relative and absolute)!"),
        "❌ FAILURE - Seed 8 (duration: 300.00s)\n   Process timed out after 300 seconds",
        block(9, "", COMPILE_CRASH.replace("17", "5")),
    ]) + "\n✅ Successful: 3/9 (33.3%)\n❌ Failed:     6/9 (66.7%)\n"
    failures, counts = peer.parse_torchfuzz_log(log)
    assert counts == {"results": 9, "successful": 3, "failed": 6, "ignored": 0}
    cats = {f.seed: f.category for f in failures}
    assert cats == {4: "compile-crash", 5: "eager-fails", 6: "generator-error", 7: "mismatch", 8: "timeout",
                    9: "compile-crash"}
    assert failures[0].program == "/tmp/torchfuzz/fuzz_00000004.py"
    assert failures[0].ops == ("torch.add", "torch.nn.functional.gelu")
    mismatch = next(f for f in failures if f.seed == 7)
    assert mismatch.signature == "mismatch [torch.add,torch.nn.functional.gelu]"
    causes = peer.cluster_failures(failures)
    assert len(causes) == 5 and causes[0].count == 2 and causes[0].seeds == (4, 9) and not causes[0].false
    assert {c.category for c in causes if c.false} == {"eager-fails", "generator-error"}


def test_eqsat_share_exposed_only_by_rewrites(peer):
    summary = {"root_causes": 3, "ledger_matches": [5], "candidates": 4, "this_run": {"judged": 10},
               "clusters": [{"kind": "miscompile", "pattern": ["erfinv"], "seed_fails": False, "count": 2},
                            {"kind": "compile-crash", "pattern": ["cumsum"], "seed_fails": True, "count": 1},
                            {"kind": "eager-bug", "pattern": ["lgamma"], "seed_fails": True, "count": 1}]}
    extra = peer.eqsat_extra(summary)
    assert extra["exposed_only_by_rewrites"] == 1 and extra["exposed_only_by_rewrites_share"] == pytest.approx(0.333)
    assert [c.false for c in peer.eqsat_causes(summary)] == [False, False, True]


def test_counts_from_verbose_lines_when_interrupted_before_a_summary(peer):
    log = "\n".join(["✅ SUCCESS - Seed 1 (duration: 9.00s)", "   STDOUT:", "   ✅ eager success",
                     block(2, "", EAGER_FAILS), "✅ SUCCESS - Seed 3 (duration: 9.00s)",
                     "🚫 IGNORED - Seed 4 (duration: 9.00s) [IGNORED]"])
    failures, counts = peer.parse_torchfuzz_log(log)
    assert counts == {"results": 4, "successful": 2, "failed": 1, "ignored": 1}
    assert [f.seed for f in failures] == [2]

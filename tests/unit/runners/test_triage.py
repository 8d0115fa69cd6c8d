"""Triage classes from the worker's error dicts and verdicts (runners/findings/triage.py).

Realistic error dicts (the shapes the worker records for Inductor's injected C++ compile and
runtime errors, Triton and CUDA failures, signals), and real Dynamo exceptions raised in-process
with cheap backends (graph break under fullgraph, recompile limit, fake-tensor failure, a failing
backend). The Inductor classes on real compiles are checked end to end in test_artifacts.py.
"""
from __future__ import annotations

import pytest
import torch

from eqsat_test.runners.findings.triage import (
    ACCURACY,
    BACKEND_COMPILE,
    CLASSES,
    DYNAMO_ERROR,
    GRAPH_BREAK,
    NOT_COMPILER,
    PERFORMANCE,
    RECOMPILATION,
    RUNTIME_CRASH,
    TIMEOUT,
    TRITON_KERNEL,
    annotate,
    classify,
    counts,
    triage,
)
from eqsat_test.runners.protocol import error_info as _error

CPP_COMPILE = {  # InductorError wrapping CppCompileError (cpp.inject_relu_bug_TESTING_ONLY="compile_error")
    "type": "InductorError", "module": "torch._inductor.exc", "message": "CppCompileError: C++ compile error",
    "traceback": "...vec512_qint.h:240:7: warning: overflow in conversion [-Woverflow]\n",
    "stack": '  File "/x/torch/_inductor/compile_fx.py", line 900, in compile_fx_inner\n'
             '  File "/x/torch/_inductor/codecache.py", line 2500, in load_pybinding\n',
    "chain": [{"type": "CppCompileError", "module": "torch._inductor.exc", "message": "C++ compile error"},
              {"type": "CalledProcessError", "module": "subprocess", "message": "Command '['g++', ...]'"}]}
RUNTIME_THROW = {  # cpp.inject_relu_bug_TESTING_ONLY="runtime_error": raised on the first call (kind compile-crash)
    "type": "RuntimeError", "module": "builtins", "message": "unhandled error",
    "traceback": 'Traceback (most recent call last):\n'
                 '  File "/x/torch/_dynamo/eval_frame.py", line 1166, in compile_wrapper\n'
                 '  File "/x/torch/_functorch/_aot_autograd/runtime_wrappers.py", line 2548, in __call__\n'
                 '  File "/x/torch/_inductor/output_code.py", line 763, in __call__\n'
                 '  File "/tmp/torchinductor_root/gf/cgfvglkz.py", line 80, in call\n'
                 '    cpp_fused_mul_relu_0(arg0_1, buf0)\nRuntimeError: unhandled error\n'}


def test_every_class_has_labels_meaning_and_next_step():
    for c in CLASSES:
        t = triage({"kind": {ACCURACY: "miscompile", PERFORMANCE: "slow-variant", TIMEOUT: "timeout"}.get(c, "unsound-rewrite")})
        assert t["meaning"] and t["next_step"]


def test_cpp_compile_error_is_a_backend_compile_error():
    t = triage({"kind": "compile-crash", "device": "cpu", "error": CPP_COMPILE})
    assert (t["class"], t["subclass"], t["stage"], t["component"]) == (BACKEND_COMPILE, "cpp-compile-error", "compile", "inductor")
    assert "oncall: cpu inductor" in t["labels"] and "oncall: pt2" in t["labels"]
    # the message alone (no chain recorded) is enough
    bare = {k: v for k, v in CPP_COMPILE.items() if k not in ("chain", "stack")}
    assert classify({"kind": "compile-crash", "error": bare}) == BACKEND_COMPILE


def test_generated_triton_source_that_does_not_parse():
    """As recorded on an H100 (torch 2.11) with triton.inject_relu_bug_TESTING_ONLY="compile_error"."""
    err = {"type": "InductorError", "module": "torch._inductor.exc",
           "message": "RuntimeError: Failed to import /tmp/torchinductor_root/b6/cb6am5xn.py",
           "stack": '  File "/x/torch/_inductor/runtime/compile_tasks.py", line 29, in _reload_python_module\n',
           "chain": [{"type": "RuntimeError", "module": "builtins", "message": "Failed to import /tmp/torchinductor_root/b6/cb6am5xn.py"},
                     {"type": "SyntaxError", "module": "builtins", "message": "invalid syntax (cb6am5xn.py, line 28)"}]}
    t = triage({"kind": "compile-crash", "device": "cuda", "error": err})
    assert (t["class"], t["subclass"]) == (BACKEND_COMPILE, "triton-compile-error") and "line 28" in t["evidence"]
    assert triage({"kind": "compile-crash", "device": "cpu", "error": err})["subclass"] == "generated-code-error"
    # and its runtime flavour (device_assert_then): a Triton kernel failure
    t = triage({"kind": "compile-crash", "device": "cuda", "error": {
        "type": "AcceleratorError", "module": "torch", "message": "CUDA error: device-side assert triggered",
        "stack": '  File "/x/torch/cuda/__init__.py", line 1162, in synchronize\n'}})
    assert (t["class"], t["stage"]) == (TRITON_KERNEL, "runtime")


def test_exception_in_the_generated_code_is_a_runtime_crash_even_on_the_first_call():
    t = triage({"kind": "compile-crash", "error": RUNTIME_THROW})
    assert (t["class"], t["stage"], t["subclass"]) == (RUNTIME_CRASH, "runtime", "cpp-exception")


@pytest.mark.parametrize("err, cls, sub", [
    ({"type": "CompilationError", "module": "triton.compiler.errors", "message": "at 12:4: invalid"}, BACKEND_COMPILE, "triton-compile-error"),
    ({"type": "LoweringException", "module": "torch._inductor.exc", "message": "AssertionError: x"}, BACKEND_COMPILE, "lowering-error"),
    ({"type": "BackendCompilerFailed", "module": "torch._dynamo.exc", "message": "backend='inductor' raised: AssertionError"},
     BACKEND_COMPILE, "inductor-error"),
    ({"type": "AcceleratorError", "module": "torch", "message": "CUDA error: an illegal memory access was encountered"},
     TRITON_KERNEL, "kernel-launch-or-execution"),
    ({"type": "RuntimeError", "module": "builtins", "message": "CUDA error: device-side assert triggered",
      "traceback": '  File "/x/torch/_inductor/runtime/triton_heuristics.py", line 10, in run\n'}, TRITON_KERNEL, None),
    ({"type": "OutOfResources", "module": "triton.runtime.errors", "message": "out of resource: shared memory"}, TRITON_KERNEL, None),
    ({"type": "Unsupported", "module": "torch._dynamo.exc", "message": "Failed to trace builtin operator"}, GRAPH_BREAK, "Unsupported"),
    ({"type": "FailOnRecompileLimitHit", "module": "torch._dynamo.exc", "message": "recompile_limit reached"}, RECOMPILATION, None),
    ({"type": "TorchRuntimeError", "module": "torch._dynamo.exc", "message": "Dynamo failed to run FX node with fake tensors"},
     DYNAMO_ERROR, "fake-tensor-propagation"),
    ({"type": "InternalTorchDynamoError", "module": "torch._dynamo.exc", "message": "AttributeError: x"}, DYNAMO_ERROR, "internal-error"),
    ({"type": "ProcessCrash", "module": "", "message": "worker died with signal 11"}, RUNTIME_CRASH, "segfault"),
    ({"type": "ValueError", "module": "builtins", "message": "boom", "traceback":
      '  File "/x/torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers.py", line 3, in aot_dispatch_base\n'},
     BACKEND_COMPILE, "aot-autograd-error"),
])
def test_error_classes(err, cls, sub):
    t = triage({"kind": "compile-crash", "device": "cuda", "error": err})
    assert t["class"] == cls, t
    if sub:
        assert t["subclass"] == sub, t
    if sub == "aot-autograd-error":
        assert "module: aotdispatch" in t["labels"] and "module: inductor" not in t["labels"]


def test_verdict_kinds():
    assert classify({"kind": "timeout", "error": {"type": "Timeout", "message": "no result within 300 s"}}) == TIMEOUT
    t = triage({"kind": "miscompile", "device": "cpu", "backend": "inductor",
                "detail": "[0] float32[8, 16]: 127 of 128 elements outside allclose"})
    assert (t["class"], t["subclass"]) == (ACCURACY, "numerical") and "module: correctness (silent)" in t["labels"]
    t = triage({"kind": "seed-miscompile", "detail": "[1]: NaN/Inf positions differ at 3 of 8"})
    assert t["subclass"] == "nan-inf" and "module: NaNs and Infs" in t["labels"]
    assert triage({"kind": "miscompile", "detail": "output: structure differs: tuple vs list"})["subclass"] == "output-structure"
    assert triage({"kind": "miscompile", "backend": "aot_eager", "detail": "x"})["component"] == "aot_autograd"
    t = triage({"kind": "config-mismatch", "config": "no-epilogue-fusion", "detail": "wrong under ..."})
    assert (t["class"], t["subclass"], t["config"]) == (ACCURACY, "config-dependent", "no-epilogue-fusion")
    assert triage({"kind": "device-mismatch", "detail": "x"})["subclass"] == "device-dependent"
    assert classify({"kind": "slow-variant", "attribution": "compiler", "detail": "4x"}) == PERFORMANCE
    assert classify({"kind": "unsound-rewrite", "detail": "x"}) == NOT_COMPILER
    assert classify({"kind": "nondeterministic"}) == NOT_COMPILER


def test_annotate_and_counts():
    fs = [{"kind": "miscompile"}, {"kind": "compile-crash", "error": CPP_COMPILE}, {"kind": "miscompile",
           "dynamo": {"graph_breaks": 2, "recompiles": 1}}]
    fs = annotate(fs)
    assert [f.triage for f in fs] == [ACCURACY, BACKEND_COMPILE, ACCURACY]
    assert fs[2].triage_info["graph_breaks"] == 2 and fs[2].triage_info["recompiles"] == 1
    assert counts(fs) == {ACCURACY: 2, BACKEND_COMPILE: 1}


# ---- real exceptions, raised in-process with cheap backends, recorded by the worker's _error ----


def _raise(fn, *args, **compile_kwargs) -> dict:
    torch._dynamo.reset()
    try:
        c = torch.compile(fn, **compile_kwargs)
        for a in args:
            c(*a)
    except Exception as e:
        return _error(e)
    finally:
        torch._dynamo.reset()
    pytest.fail("expected an exception")


def test_real_graph_break_under_fullgraph():
    def f(x):
        y = x.relu()
        print("side effect")
        return y * 2

    err = _raise(f, (torch.randn(4),), backend="eager", fullgraph=True)
    assert classify({"kind": "compile-crash", "error": err}) == GRAPH_BREAK, err["type"]


def test_real_recompile_limit():
    def f(x):
        return x * 2

    with torch._dynamo.config.patch(recompile_limit=1, fail_on_recompile_limit_hit=True, automatic_dynamic_shapes=False):
        err = _raise(f, (torch.randn(2),), (torch.randn(3),), (torch.randn(4),), backend="eager", dynamic=False)
    assert classify({"kind": "run-crash", "error": err}) == RECOMPILATION, (err["type"], err["message"])


def test_real_fake_tensor_failure_is_a_dynamo_error():
    def f(x, y):
        return torch.mm(x, y)

    err = _raise(f, (torch.randn(2, 3), torch.randn(4, 5)), backend="eager")
    t = triage({"kind": "compile-crash", "error": err})
    assert (t["class"], t["subclass"]) == (DYNAMO_ERROR, "fake-tensor-propagation"), (err["type"], err["message"])


def test_real_failing_backend_is_a_backend_compile_error():
    def broken_backend(gm, example_inputs):
        raise AssertionError("lowering failed on purpose")

    err = _raise(lambda x: x.sin() + 1, (torch.randn(3),), backend=broken_backend)
    assert err["type"] == "BackendCompilerFailed" and any(c["type"] == "AssertionError" for c in err["chain"])
    assert classify({"kind": "compile-crash", "error": err}) == BACKEND_COMPILE

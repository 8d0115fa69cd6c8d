"""Triage: classify each finding the way PyTorch triages torch.compile failures (graph break, Dynamo error, Inductor compile error, runtime crash, Triton kernel failure, recompilation, accuracy).

Pure functions of a finding dict (kind, verdict detail, the worker's `error` dict with type,
module, message, traceback, and `chain`, the exception's cause chain). No torch import: runs
wherever findings are read (report, store, campaign merge).

`classify(f)` returns the class (one of CLASSES); `triage(f)` returns the class with the
evidence a compiler engineer wants first: the component at fault, the stage (trace, compile,
runtime, output), a subclass, suggested GitHub labels and a next step.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from eqsat_test.runners.records import Finding, FindingKind, as_finding

GRAPH_BREAK = "graph-break"
DYNAMO_ERROR = "dynamo-internal-error"
BACKEND_COMPILE = "backend-compile-error"
RUNTIME_CRASH = "runtime-crash"
TRITON_KERNEL = "triton-kernel-failure"
RECOMPILATION = "recompilation"
ACCURACY = "accuracy"
TIMEOUT = "timeout"
PERFORMANCE = "performance"
NOT_COMPILER = "not-a-compiler-bug"
EAGER_KERNEL = "eager-kernel"

CLASSES = (GRAPH_BREAK, DYNAMO_ERROR, BACKEND_COMPILE, RUNTIME_CRASH, TRITON_KERNEL, RECOMPILATION,
           ACCURACY, TIMEOUT, PERFORMANCE, NOT_COMPILER, EAGER_KERNEL)

# One line per class: what it means for whoever picks the issue up.
MEANING = {
    GRAPH_BREAK: "Dynamo could not trace the program into one graph (Unsupported / graph break under fullgraph)",
    DYNAMO_ERROR: "Dynamo itself failed while tracing (internal error, fake-tensor propagation)",
    BACKEND_COMPILE: "the backend failed to compile the captured graph (AOTAutograd, Inductor lowering, C++/Triton compile)",
    RUNTIME_CRASH: "the compiled program raised or died while running",
    TRITON_KERNEL: "a generated GPU (Triton) kernel failed at run time (illegal address, device assert, launch)",
    RECOMPILATION: "guards failed and Dynamo recompiled until the recompile limit",
    ACCURACY: "silent wrong output: compiled disagrees with eager on the same program",
    TIMEOUT: "no result within the time limit (a hang in compile or run)",
    PERFORMANCE: "the compiled program is far slower than an equivalent program (informational)",
    NOT_COMPILER: "not a compiler bug (a rewrite rule's fault, or nondeterminism)",
    EAGER_KERNEL: "eager is the wrong side: its kernel (or a check it lacks) disagrees with the op's definition, "
                  "and compiled agrees with the independent referee",
}

_LABELS = {
    GRAPH_BREAK: ["oncall: pt2", "module: dynamo", "module: graph breaks"],
    DYNAMO_ERROR: ["oncall: pt2", "module: dynamo"],
    BACKEND_COMPILE: ["oncall: pt2", "module: inductor"],
    RUNTIME_CRASH: ["oncall: pt2", "module: inductor"],
    TRITON_KERNEL: ["oncall: pt2", "module: inductor"],
    RECOMPILATION: ["oncall: pt2", "module: dynamo", "module: guards"],
    ACCURACY: ["oncall: pt2", "module: inductor", "module: correctness (silent)"],
    TIMEOUT: ["oncall: pt2"],
    PERFORMANCE: ["oncall: pt2", "module: inductor", "module: performance"],
    NOT_COMPILER: [],
    EAGER_KERNEL: ["module: correctness (silent)"],
}

_NEXT = {
    GRAPH_BREAK: "rerun with TORCH_LOGS=graph_breaks; fullgraph=True names the unsupported construct",
    DYNAMO_ERROR: "rerun with TORCHDYNAMO_VERBOSE=1 TORCH_LOGS=+dynamo; minify with TORCHDYNAMO_REPRO_AFTER=dynamo",
    BACKEND_COMPILE: "see output_code.py / failing_kernel.* and compile_log.txt; minify with TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2",
    RUNTIME_CRASH: "see output_code.py (the crashing call is in its traceback); minify with TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2",
    TRITON_KERNEL: "rerun with CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer; the kernel is in output_code.py",
    RECOMPILATION: "rerun with TORCH_LOGS=recompiles,guards to see the failing guard",
    ACCURACY: "see minifier_repro.py (after-AOT accuracy minifier) and bisect.txt (compiler bisector); compare output_code.py",
    TIMEOUT: "rerun repro.py under py-spy dump / faulthandler to see where it hangs",
    PERFORMANCE: "compare the two programs' output_code (TORCH_LOGS=output_code) and kernel counts",
    NOT_COMPILER: "fix or reclassify the rewrite rule (eqsat-test rules check)",
    EAGER_KERNEL: "file against the eager op (not oncall: pt2): repro.py names the reference that convicts eager",
}

# Exception types by where they come from (the worker records type, module and the cause chain).
_GRAPH_BREAK_TYPES = {"Unsupported", "UserError", "UncapturedHigherOrderOpError", "StepUnsupported",
                      "UnsafeScriptObjectError"}
_RECOMPILE_TYPES = {"RecompileError", "FailOnRecompileLimitHit", "RecompileLimitExceeded"}
_DYNAMO_ERROR_TYPES = {"InternalTorchDynamoError", "TorchRuntimeError", "ResumePrologueTracingError",
                       "InfiniteGeneratorError", "CondOpArgsMismatchError", "SkipFrame"}
_CPP_COMPILE_TYPES = {"CppCompileError", "CUDACompileError", "CalledProcessError"}
_TRITON_COMPILE_TYPES = {"CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"}
_LOWERING_TYPES = {"LoweringException", "MissingOperatorWithoutDecomp", "MissingOperatorWithDecomp",
                   "InvalidCxxCompiler", "CppWrapperCodegenError"}
_BACKEND_WRAPPER_TYPES = {"BackendCompilerFailed", "InductorError"}
_TRITON_RUNTIME_TYPES = {"OutOfResources", "AcceleratorError", "CudaError"}
_TRITON_RUNTIME_MSG = re.compile(
    r"illegal memory access|device-side assert|misaligned address|an illegal instruction|"
    r"unspecified launch failure|CUDA error|HIP error|triton.*(launch|OutOfResources)|out of resource",
    re.IGNORECASE)
_RECOMPILE_MSG = re.compile(r"recompile_limit|cache_size_limit|recompil(e|ation) limit", re.IGNORECASE)
_GRAPH_BREAK_MSG = re.compile(r"graph break|fullgraph=True|Unsupported:", re.IGNORECASE)

# Frames that place an exception in a stage of torch.compile (the traceback's innermost match wins).
_STAGE_FRAMES = [
    ("runtime", re.compile(r"torchinductor_[^/]*/.*\.py\", line \d+, in (call|runner|kernel)|"
                           r"_inductor/output_code\.py\", line \d+, in __call__|"
                           r"runtime_wrappers\.py\", line \d+, in (runtime_wrapper|__call__|call_func_at_runtime)|"
                           r"triton/runtime/|_inductor/runtime/triton_heuristics\.py\", line \d+, in (run|launch)")),
    ("compile", re.compile(r"_inductor/(compile_fx|graph|scheduler|lowering|codecache|async_compile|ir|"
                           r"codegen/[a-z_]+)\.py\"")),
    ("aot", re.compile(r"_functorch/(aot_autograd|_aot_autograd/(?!runtime_wrappers)[a-z_]+)\.py\"")),
    ("trace", re.compile(r"_dynamo/(symbolic_convert|variables/[a-z_]+|output_graph|convert_frame|"
                         r"utils)\.py\"")),
]


def _types(err: dict) -> list[str]:
    """The exception's type and its cause chain's types (outermost first)."""
    out = [err.get("type") or ""]
    for c in err.get("chain") or []:
        t = c.get("type") if isinstance(c, dict) else str(c)
        if t and t not in out:
            out.append(t)
    # Inductor prefixes the inner type to the message: "CppCompileError: C++ compile error".
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*(Error|Exception|Failed|Unsupported))\b:", err.get("message") or "")
    if m and m.group(1) not in out:
        out.append(m.group(1))
    return [t for t in out if t]


def _stage(tb: str) -> str | None:
    """Innermost torch.compile stage named by the traceback's frames."""
    best, pos = None, -1
    for stage, rx in _STAGE_FRAMES:
        for m in rx.finditer(tb or ""):
            if m.start() > pos:
                best, pos = stage, m.start()
    return best


def _crash(f: Finding) -> dict:
    err = f.error or {}
    types = set(_types(err))
    module = err.get("module") or ""
    msg = err.get("message") or ""
    tb = err.get("traceback") or ""
    text = f"{msg}\n{tb[-3000:]}"
    stage = _stage((err.get("stack") or "") + "\n" + tb)
    kind = f.kind

    if kind == FindingKind.TIMEOUT or "Timeout" in types:
        return {"class": TIMEOUT, "stage": None, "subclass": "hang", "component": None,
                "evidence": msg or "no result within the time limit"}
    if types & _RECOMPILE_TYPES or _RECOMPILE_MSG.search(msg):
        return {"class": RECOMPILATION, "stage": "trace", "subclass": "recompile-limit", "component": "dynamo",
                "evidence": f"{err.get('type')}: {msg}"}
    # The outer exception decides where it names a Dynamo failure; its cause chain (which can hold
    # an Unsupported that Dynamo handled on the way) only where the outer one is a wrapper.
    outer = err.get("type") or ""
    if outer in _GRAPH_BREAK_TYPES or (module.startswith("torch._dynamo") and outer not in _DYNAMO_ERROR_TYPES
                                       and outer not in _BACKEND_WRAPPER_TYPES and _GRAPH_BREAK_MSG.search(msg)):
        return {"class": GRAPH_BREAK, "stage": "trace", "subclass": outer if outer in _GRAPH_BREAK_TYPES else "unsupported",
                "component": "dynamo", "evidence": f"{outer}: {msg}"}
    if outer in _DYNAMO_ERROR_TYPES:
        sub = "fake-tensor-propagation" if outer == "TorchRuntimeError" else "internal-error"
        return {"class": DYNAMO_ERROR, "stage": "trace", "subclass": sub, "component": "dynamo",
                "evidence": f"{outer}: {msg}"}
    if types & _CPP_COMPILE_TYPES or "C++ compile error" in msg:
        return {"class": BACKEND_COMPILE, "stage": "compile", "subclass": "cpp-compile-error",
                "component": "inductor", "evidence": f"{err.get('type')}: {msg}"}
    if types & _TRITON_RUNTIME_TYPES or (_TRITON_RUNTIME_MSG.search(text) and stage in ("runtime", None)):
        return {"class": TRITON_KERNEL, "stage": "runtime", "subclass": "kernel-launch-or-execution",
                "component": "inductor", "evidence": f"{err.get('type')}: {msg}"}
    if "SyntaxError" in types and "Failed to import" in text:  # Inductor's generated module does not parse
        sub = "triton-compile-error" if f.device == "cuda" else "generated-code-error"
        return {"class": BACKEND_COMPILE, "stage": "compile", "subclass": sub, "component": "inductor",
                "evidence": f"{err.get('type')}: {msg}; " + next((c.get("message", "") for c in err.get("chain") or []
                                                                  if isinstance(c, dict) and c.get("type") == "SyntaxError"), "")}
    if types & _TRITON_COMPILE_TYPES or re.search(r"triton[./]compiler", text):
        return {"class": BACKEND_COMPILE, "stage": "compile", "subclass": "triton-compile-error",
                "component": "inductor", "evidence": f"{err.get('type')}: {msg}"}
    if types & _LOWERING_TYPES:
        return {"class": BACKEND_COMPILE, "stage": "compile", "subclass": "lowering-error",
                "component": "inductor", "evidence": f"{err.get('type')}: {msg}"}
    if types & _BACKEND_WRAPPER_TYPES or stage in ("compile", "aot"):
        sub = "aot-autograd-error" if stage == "aot" else "inductor-error"
        comp = "aot_autograd" if stage == "aot" else "inductor"
        return {"class": BACKEND_COMPILE, "stage": "compile", "subclass": sub, "component": comp,
                "evidence": f"{err.get('type')}: {msg}"}
    if stage == "trace" or module.startswith("torch._dynamo"):
        return {"class": DYNAMO_ERROR, "stage": "trace", "subclass": "internal-error", "component": "dynamo",
                "evidence": f"{err.get('type')}: {msg}"}
    # Everything else: the compiled program ran (or its process died) and failed.
    if err.get("type") == "ProcessCrash":
        sig = re.search(r"signal (\d+)", msg)
        sub = {"11": "segfault", "6": "abort", "9": "killed (out of memory?)", "7": "bus error",
               "8": "floating point exception"}.get(sig.group(1) if sig else "", "process died")
        return {"class": RUNTIME_CRASH, "stage": "runtime", "subclass": sub, "component": "inductor",
                "evidence": msg}
    sub = "cpp-exception" if msg.strip() in ("unhandled error", "std::exception") else "exception"
    return {"class": RUNTIME_CRASH, "stage": "runtime", "subclass": sub, "component": "inductor",
            "evidence": f"{err.get('type')}: {msg}" + ("" if stage == "runtime" else " (no compile-stage frame)")}


# The component a grad-miscompile's backward stage names (runners/exec/training.py STAGES).
_BACKWARD_COMPONENT = {"aot-autograd": "aot_autograd", "decompositions-partitioner": "aot_autograd",
                       "inductor-forward-saved": "inductor", "inductor-backward": "inductor", "backend": "backend"}


def _accuracy(f: Finding) -> dict:
    detail = f.detail or ""
    if "structure differs" in detail:
        sub = "output-structure"
    elif re.search(r"NaN|inf", detail):
        sub = "nan-inf"
    elif "(exact)" in detail or "(indices)" in detail:
        sub = "integer-or-bool"
    else:
        sub = "numerical"
    comp = "inductor"
    backend = f.backend or ""
    if backend.startswith(("eager", "aot_eager")):
        comp = "dynamo" if backend == "eager" else "aot_autograd"
    out = {"class": ACCURACY, "stage": "output", "subclass": sub, "component": comp, "evidence": detail[:300]}
    if f.kind == FindingKind.GRAD_MISCOMPILE:  # the stage: runners/exec/training.py backward_stage
        out.update(stage="backward", subclass=f"gradient-{sub}", backward_stage=f.grad_stage or "",
                   component=_BACKWARD_COMPONENT.get(f.grad_stage or "", comp))
    if f.kind == FindingKind.CONFIG_MISMATCH:
        out["subclass"] = "config-dependent"
        out["config"] = f.config or ""
    if f.kind == FindingKind.DEVICE_MISMATCH:
        out["subclass"] = "device-dependent"
    return out


def triage(f: Finding | Mapping) -> dict:
    """The triage record of a finding or note: class, stage, subclass, component, evidence,
    labels (suggested GitHub labels) and next_step."""
    f = as_finding(f)
    kind = (f.kind or "")
    if kind in (FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE, FindingKind.DEVICE_MISMATCH,
                FindingKind.CONFIG_MISMATCH, FindingKind.GRAD_MISCOMPILE, FindingKind.COMPILED_NONDETERMINISTIC):
        t = _accuracy(f)
    elif kind in (FindingKind.COMPILE_CRASH, FindingKind.RUN_CRASH, FindingKind.TIMEOUT, FindingKind.CAPTURE_CRASH):
        t = _crash(f)
    elif kind == FindingKind.EAGER_BUG:
        t = {"class": EAGER_KERNEL, "stage": "output", "subclass": f.judged_kind or "eager",
             "component": "aten (eager)", "evidence": (f.referee_line or f.detail or "")[:300]}
    elif kind == FindingKind.SLOW_VARIANT:
        t = {"class": PERFORMANCE, "stage": "runtime", "subclass": f.attribution or "compiled-runtime",
             "component": "inductor", "evidence": (f.detail or "")[:300]}
    elif kind in (FindingKind.UNSOUND_REWRITE, FindingKind.NONDETERMINISTIC):
        t = {"class": NOT_COMPILER, "stage": None, "subclass": kind, "component": "eqsat-test rules" if
             kind == FindingKind.UNSOUND_REWRITE else "program", "evidence": (f.detail or "")[:300]}
    elif kind in (FindingKind.SEED_ERROR, FindingKind.INTERNAL_ERROR):
        t = {"class": NOT_COMPILER, "stage": None, "subclass": kind, "component": "eqsat-test",
             "evidence": (f.detail or "")[:300]}
    else:
        t = {"class": NOT_COMPILER, "stage": None, "subclass": kind or "unknown", "component": None,
             "evidence": (f.detail or "")[:300]}
    labels = list(_LABELS[t["class"]])
    if t["class"] in (BACKEND_COMPILE, RUNTIME_CRASH, ACCURACY, PERFORMANCE) and f.device == "cpu" \
            and t.get("component") == "inductor":
        labels.append("oncall: cpu inductor")
    if t.get("subclass") == "nan-inf":
        labels.append("module: NaNs and Infs")
    if t["class"] == RUNTIME_CRASH and t.get("subclass") in ("segfault", "abort", "bus error"):
        labels.append("module: crash")
    if t.get("component") == "aot_autograd":
        labels = [x for x in labels if x != "module: inductor"] + ["module: aotdispatch"]
    dyn = f.dynamo or {}
    if dyn.get("graph_breaks"):
        t["graph_breaks"] = dyn["graph_breaks"]
    if dyn.get("recompiles"):
        t["recompiles"] = dyn["recompiles"]
    t["labels"] = labels
    t["meaning"] = MEANING[t["class"]]
    t["next_step"] = _NEXT[t["class"]]
    return t


def classify(f: Finding | Mapping) -> str:
    """Just the class name (one of CLASSES)."""
    f = as_finding(f)
    return triage(f)["class"]


def annotate(findings: list) -> list[Finding]:
    """The findings and notes with `triage` (the class) and `triage_info` (the record) set."""
    out = []
    for f in map(as_finding, findings):
        t = triage(f)
        out.append(f.with_(triage=t["class"], triage_info=t))
    return out


def counts(findings: list) -> dict[str, int]:
    """How many findings per triage class (those without one are classified on the fly)."""
    out: dict[str, int] = {}
    for f in findings:
        c = f.triage or classify(f)
        out[c] = out.get(c, 0) + 1
    return out

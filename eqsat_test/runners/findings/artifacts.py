"""Finding artifacts: a PyTorch-style regression test (test_repro.py), and a debug rerun of the failing program keeping Inductor's output code, the post-AOT FX graph, the after-AOT minifier's result and the compiler bisector's verdict.

Execution side only (torch; no egglog). Everything here runs on findings only, each step in its
own subprocess with its own timeout, and records what happened (ran, timed out, did not apply)
in the finding's meta.json under `debug_artifacts`. Steps, per finding folder:

1. debug rerun of repro.py (the minimized program where there is one) with TORCH_COMPILE_DEBUG=1
   (a private debug dir), TORCH_LOGS=output_code,graph_breaks,recompiles and Inductor's FX graph
   cache off (so the graph is compiled and dumped again; C++/Triton kernels still come from the
   shared cache). For accuracy findings the same run sets TORCHDYNAMO_REPRO_AFTER=aot
   TORCHDYNAMO_REPRO_LEVEL=4 (Dynamo's own accuracy check after AOT, which dumps a minifier
   launcher when it agrees the graph is wrong); for compile/runtime exceptions, LEVEL=2.
   Kept: output_code.py (the generated C++/Triton kernels and their wrapper),
   fx_graph_readable.py / fx_graph_runnable.py (the post-AOT FX graph Inductor received),
   fx_graph_transformed.py (after Inductor's FX passes), ir_post_fusion.txt, compile_log.txt, and
   for a C++ compile error the failing source as failing_kernel.cpp.
2. minifier: `python minifier_launcher.py minify --no-isolate` (in-process: ~10x faster than the
   isolated default), bounded; kept as minifier_repro.py (+ minifier/storages/ with the tensors
   it loads), the final result or, on timeout, the smallest checkpoint reached.
3. compiler bisector (torch._inductor.compiler_bisector.CompilerBisector), for accuracy findings by
   default (a crash has its traceback; `--bisect all` for every finding): which backend
   (eager, aot_eager, aot_eager_decomp_partition, inductor), which subsystem (pre/post-grad
   passes, lowerings, config switches) and which application of it first breaks the program;
   kept as bisect.txt.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from eqsat_test.codegen_templates import render
from eqsat_test.runners.exec.backend_code import backend_code, script_options
from eqsat_test.runners.findings.meta import write_meta
from eqsat_test.runners.findings.triage import ACCURACY, BACKEND_COMPILE, RUNTIME_CRASH, TRITON_KERNEL, triage
from eqsat_test.runners.protocol import compile_options, is_custom_backend
from eqsat_test.runners.records import Finding, FindingKind, as_finding, replaced

TEST_REPRO = "test_repro.py"
INLINE_MAX_NUMEL = 64  # inputs with at most this many elements in all are inlined into test_repro.py
LOG_MAX_CHARS = 400_000
# no compiler regression test or compiler artifacts: a device pair's finding; an eager bug (eager's kernel is at fault)
_NO_TEST_KINDS = (FindingKind.DEVICE_MISMATCH.value, FindingKind.EAGER_BUG.value)


@dataclass
class ArtifactOptions:
    timeout: float = 180.0  # the debug rerun
    minifier: bool = True
    minifier_timeout: float = 180.0
    bisect: str = "accuracy"  # which findings get the compiler bisector: accuracy (silent wrong output), all, none
    bisect_timeout: float = 240.0
    max_findings: int = 4  # findings beyond this many get test_repro.py only
    jobs: int = 1


# ----------------------------------------------------------------------------------------------
# test_repro.py


def _forward_and_imports(src: str) -> tuple[str, list[str]]:
    tree = ast.parse(src)
    fwd = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if fwd is None:
        raise ValueError("program has no `forward` function")
    # a program that writes its inputs (lowering/emit.py): `program` and what calls it on copies of them come too
    writes = {"WRITES", "INPUT_NAMES", "program", "written_copies", "written_call"}
    kept = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name in writes) or (
        isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id in writes for t in n.targets))]
    mods = [a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names
            if a.name not in ("torch", "math") and a.asname is None]
    parts = [ast.get_source_segment(src, f) for f in (*kept, fwd)]
    return "\n\n\n".join(p for p in parts if p), sorted(set(mods))


def _literal(x) -> str | None:
    import torch
    if isinstance(x, torch.Tensor):
        if x.is_complex() or x.is_sparse or x.layout != torch.strided:
            return None
        vals = x.detach().cpu().tolist()
        return f"torch.tensor({vals!r}, dtype={x.dtype}).reshape({tuple(x.shape)!r})"
    if isinstance(x, (bool, int, float)) or x is None:
        return repr(x)
    return None


def _inline_inputs(inputs_path: Path | None) -> list[str] | None:
    """Source lines for small inputs, or None (then the test loads the .pt file beside it)."""
    if inputs_path is None or not inputs_path.is_file():
        return None
    import torch
    try:
        xs = torch.load(inputs_path, weights_only=True)
    except Exception:
        return None
    numel = sum(x.numel() for x in xs if isinstance(x, torch.Tensor))
    if numel > INLINE_MAX_NUMEL:
        return None
    lines = [_literal(x) for x in xs]
    return None if any(line is None for line in lines) else lines


def _tolerance(inputs_path: Path | None) -> float:
    """The minifier's accuracy tolerance: the loosest of the oracle's per-dtype tolerances over the inputs."""
    if inputs_path is None or not inputs_path.is_file():
        return 1e-4
    # torch and the numerics table only when a minifier runs (artifacts imports without torch)
    import torch

    from eqsat_test.runners.oracle.numerics import tolerance  # (see above)
    try:
        xs = torch.load(inputs_path, weights_only=True)
    except Exception:
        return 1e-4
    tols = [tolerance(x.dtype) for x in xs if isinstance(x, torch.Tensor) and x.is_floating_point()]
    return max(tols) if tols else 1e-4


def _ident(s: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]+", "_", s).strip("_").lower()


def verdict_lines(f: Finding) -> list[str]:
    """What the finding's verdict was, said of the program repro.py and test_repro.py hold: the
    minimized program's own verdict where minimization recorded it (`min_detail`) or the repro's rerun
    printed it, else the full variant's, labelled as such."""
    minimized = bool(f.minimized_file)
    own = f.min_detail or ((f.debug_artifacts or {}).get("debug_run") or {}).get("verdict")
    if minimized and own:
        return [f"Verdict on this minimized program: {own[:400]}"]
    if minimized:
        return [f"Verdict on the full variant before minimization: {(f.detail or '')[:400]}",
                "The minimized program here fails the same way (same kind of finding); its own verdict is what "
                "`python repro.py` prints."]
    return [f"Verdict: {f.detail[:400]}"] if f.detail else []


def test_repro_source(program_src: str, f: Finding, inputs_path: Path | None = None, *,
                      inputs_file: str = "inputs.pt") -> str | None:
    """test_repro.py for a finding (None where it does not apply): the program's `forward`
    inlined (the same program as repro.py: the minimized one where there is one), its inputs inlined
    when small (else loaded from `inputs_file` beside the test, the file repro.py loads), one TestCase
    method that compiles it the way the finding did and judges it as repro.py does: with
    eqsat-test's oracle where eqsat-test is importable, else like Dynamo's accuracy checker
    (torch._dynamo.utils.same with an fp64 reference)."""
    if f.kind in _NO_TEST_KINDS or f.kind in (FindingKind.SLOW_VARIANT, FindingKind.UNSOUND_REWRITE,
                                                            FindingKind.NONDETERMINISTIC):
        return None
    if f.grad:  # training mode: repro.py runs forward and backward; a forward-only test would pass
        return None
    forward_src, mods = _forward_and_imports(program_src)
    spec = (f.backend or "inductor")
    prelude, backend_expr = backend_code(spec)
    opts, config = script_options(spec)
    t = f.triage_info or triage(f)
    try:
        import torch
        torch_version = torch.__version__
    except Exception:
        torch_version = "?"
    summary = [f"Program: variant {f.variant}" + (f" (rewritten by: {', '.join(f.rules)})" if f.rules else
                                                        " (the unmodified model)")
               + (", minimized (the program of repro.py)" if f.minimized_file else "") + ".",
               f"Compiled with torch.compile(backend={spec!r}{''.join(f', {k}={v!r}' for k, v in opts.items())})"
               + (f" and Inductor config {config}" if config else "") + f" on {(f.device or 'cpu')}.",
               f"Triage: {t['class']} ({t.get('subclass')}), stage {t.get('stage')}, component {t.get('component')}."]
    summary += verdict_lines(f)
    if f.kind == FindingKind.CONFIG_MISMATCH:
        summary.append(f"Configuration: {f.direction} {f.config!r}; right under {f.configs_right}, "
                       f"wrong under {f.configs_wrong}.")
    inline = _inline_inputs(inputs_path)
    return render(
        "test_repro.py.j2", triage_class=t["class"], kind=f.kind, component=t.get("component"),
        summary_lines=summary, torch_version=torch_version, inductor_config=config,
        inductor_config_src=repr(config), extra_modules=mods, forward_source=forward_src,
        inline_inputs=inline, inputs_file=inputs_file, class_name="TestEqsatRepro", device=(f.device or "cpu"),
        test_name="test_" + _ident(f"{(f.kind or 'finding')}_{(f.variant or '')}"), backend_expr=backend_expr,
        backend_prelude=prelude,
        options=opts, tol=_tolerance(inputs_path),
        extreme_inputs=str(f.min_input_set or f.input_set or "").startswith("special"),
    )


def write_test_repro(d: Path, program_src: str, f: Finding) -> Path | None:
    """Write d/test_repro.py (inputs from d/inputs.pt); None where no test applies. Also points the
    finding's triage next step at files that exist in d (see next_step)."""
    _set_next_step(d, f)
    try:
        text = test_repro_source(program_src, f, d / "inputs.pt")
    except Exception as e:  # never fail a finding for its test
        (d / "test_repro.error.txt").write_text(f"{type(e).__name__}: {e}\n")
        return None
    if text is None:
        return None
    (d / TEST_REPRO).write_text(text)
    return d / TEST_REPRO


# ----------------------------------------------------------------------------------------------
# the next step, naming only files the finding folder has


def next_step(d: Path, f: Finding) -> str | None:
    """The triage next step for the finding in folder d, naming only files that exist there (the
    minifier's repro, the bisector's verdict, Inductor's output code are kept only when their step ran
    and produced them); a command to make them where they are missing. None: triage's text stands."""
    cls = f.triage or (f.triage_info or {}).get("class")
    art = f.debug_artifacts or {}
    has = lambda name: (d / name).is_file()  # noqa: E731
    code = ("compare output_code.py (Inductor's generated code)" if has("output_code.py") else
            "see Inductor's generated code with TORCH_LOGS=output_code python repro.py")
    level = "4" if cls == ACCURACY else "2"
    if has("minifier_repro.py"):
        minify = "run minifier_repro.py (the after-AOT minifier's smaller graph)"
    else:
        why = (art.get("minifier") or {}).get("status") or (art.get("minifier") or {}).get("why")
        minify = (f"minify with TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL={level} python repro.py"
                  + (f" (no minifier_repro.py here: {why})" if why else ""))
    if cls == ACCURACY:
        bisect = ("read bisect.txt (compiler bisector)" if has("bisect.txt") else
                  "bisect with torch._inductor.compiler_bisector.CompilerBisector")
        return f"{minify}; {bisect}; {code}"
    if cls == BACKEND_COMPILE:
        kernel = next((p.name for p in sorted(d.glob("failing_kernel.*"))), None)
        files = [x for x in ("output_code.py", kernel, "compile_log.txt") if x and has(x)]
        return (f"see {' / '.join(files)}; " if files else "rerun repro.py with TORCH_LOGS=output_code; ") + minify
    if cls == RUNTIME_CRASH:
        return f"{code} (the crashing call is in its traceback); {minify}"
    if cls == TRITON_KERNEL:
        where = "the kernel is in output_code.py" if has("output_code.py") else "TORCH_LOGS=output_code shows the kernel"
        return f"rerun with CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer; {where}"
    return None


def _set_next_step(d: Path, f: Finding) -> None:
    """The next step (its folder's files decide it) into the `triage_info` dict of a finding being written."""
    t = f.triage_info
    try:
        step = next_step(d, f) if isinstance(t, dict) else None
    except Exception:  # never fail a finding for its advice
        return
    if step and isinstance(t, dict):
        t["next_step"] = step


# ----------------------------------------------------------------------------------------------
# subprocess steps


def _run(cmd: list[str], cwd: Path, env: dict, timeout: float) -> tuple[int | None, str, float]:
    """(exit code or None on timeout, combined output, seconds); the whole process group dies on timeout."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, cwd=str(cwd), env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                p.kill()
            p.wait()
            rc = None
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return rc, text, time.perf_counter() - t0


def _base_env() -> dict:
    env = dict(os.environ)
    for k in ("TORCH_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG_DIR", "TORCH_LOGS", "TORCHDYNAMO_REPRO_AFTER",
              "TORCHDYNAMO_REPRO_LEVEL", "TORCH_BISECT_BACKEND", "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX"):
        env.pop(k, None)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def repro_verdict(text: str) -> str | None:
    """The verdict repro.py printed ("MISCOMPILE (...): detail"), or None: it stopped before judging,
    or judged the AccuracyError that Dynamo's own after-AOT check (TORCHDYNAMO_REPRO_AFTER, set for
    the debug rerun) raised, which says nothing of the program."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("VERDICT:"):
            if "AccuracyError" in line:
                return None
            rest = [x.strip() for x in lines[i + 1:i + 4] if x.startswith("  ") and not x.startswith("  differs at")]
            return (line[len("VERDICT:"):].strip() + (": " + "; ".join(rest) if rest else ""))[:600]
    return None


def _minify_mode(f: Finding) -> tuple[str | None, str]:
    """(TORCHDYNAMO_REPRO_LEVEL or None, why)."""
    cls = f.triage or (f.triage_info or {}).get("class")
    backend = (f.backend or "inductor")
    if not backend.startswith("inductor"):
        return None, f"the after-AOT minifier supports Inductor only (backend {backend})"
    if cls == ACCURACY:
        return "4", "accuracy: TORCHDYNAMO_REPRO_LEVEL=4 (Dynamo's accuracy check after AOT)"
    if cls in (BACKEND_COMPILE, RUNTIME_CRASH):
        if (f.error or {}).get("type") == "ProcessCrash":
            return None, "the process dies (signal): the in-process minifier cannot survive it"
        return "2", "exception: TORCHDYNAMO_REPRO_LEVEL=2 (minify on compile/run error after AOT)"
    return None, f"no after-AOT minifier for triage class {cls}"


def _graph_dirs(debug: Path) -> list[Path]:
    """Inductor's per-graph debug folders, the program's own first (the minifier's storage
    hashing compiles a helper graph of its own: left out)."""
    out = []
    for d in sorted(debug.glob("**/torchinductor/*/")):
        if not d.is_dir():
            continue
        readable = d / "fx_graph_readable.py"
        if readable.is_file() and "_content_store.py" in readable.read_text(errors="replace"):
            continue
        if any((d / n).is_file() for n in ("output_code.py", "fx_graph_readable.py", "fx_graph_runnable.py")):
            out.append(d)
    return out


_GRAPH_FILES = ("output_code.py", "fx_graph_readable.py", "fx_graph_runnable.py", "fx_graph_transformed.py",
                "ir_pre_fusion.txt", "ir_post_fusion.txt")


def _keep_debug_files(debug: Path, dest: Path, log_text: str) -> list[str]:
    kept = []
    dirs = _graph_dirs(debug)
    for i, gd in enumerate(dirs):
        for name in _GRAPH_FILES:
            src = gd / name
            if src.is_file():
                stem, ext = os.path.splitext(name)
                target = name if len(dirs) == 1 else f"{stem}.graph{i}{ext}"
                sub = dest if name in ("output_code.py", "fx_graph_readable.py", "fx_graph_runnable.py") else dest / "debug"
                sub.mkdir(exist_ok=True)
                shutil.copy(src, sub / target)
                kept.append(str((sub / target).relative_to(dest)))
    # A C++ (or nvcc) compile error names the source it failed on; a generated module that does
    # not import (a Triton kernel that does not parse) names its file.
    for m in re.finditer(r"(?:g\+\+|c\+\+|clang\+\+|nvcc)\S*\s+(\S+\.(?:cpp|cu))\b|Failed to import (\S+\.py)\b", log_text):
        src = Path(m.group(1) or m.group(2))
        if src.is_file():
            shutil.copy(src, dest / f"failing_kernel{src.suffix}")
            kept.append(f"failing_kernel{src.suffix}")
            break
    return kept


def _portable_minifier_repro(src_file: Path, dest: Path) -> int:
    """Copy an after-AOT repro into dest/minifier_repro.py with the tensors it loads under
    dest/minifier/storages; returns its node count (from the checkpoint name, else -1)."""
    text = src_file.read_text()
    m = re.search(r"save_dir='([^']*)'", text)
    store = dest / "minifier"
    if m:
        old = Path(m.group(1))
        for h in set(re.findall(r"reader\.storage\('([0-9a-f]+)'", text)):
            s = old / "storages" / h
            if s.is_file():
                (store / "storages").mkdir(parents=True, exist_ok=True)
                shutil.copy(s, store / "storages" / h)
        text = text.replace(f"save_dir='{m.group(1)}'",
                            "save_dir=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'minifier')")
    # Environment lines that point into our scratch folders.
    text = re.sub(r"^os\.environ\['(TORCH_COMPILE_DEBUG|TORCH_COMPILE_DEBUG_DIR|TORCH_LOGS|TORCHINDUCTOR_CACHE_DIR|"
                  r"TORCHINDUCTOR_FX_GRAPH_CACHE|TORCHINDUCTOR_AUTOGRAD_CACHE|_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR)'\].*\n",
                  "", text, flags=re.MULTILINE)
    if "import os" not in text.split("\n", 5)[0:5]:
        text = "import os\n" + text
    header = ("# After-AOT minified repro written by PyTorch's minifier (torch._dynamo.repro.after_aot), kept by eqsat-test.\n"
              "# Run: python minifier_repro.py   (raises AccuracyError / the compile error while the bug reproduces)\n")
    (dest / "minifier_repro.py").write_text(header + text)
    return _count_ops(text)


def _count_ops(text: str) -> int:
    """aten/prims calls in an after-AOT repro's `Repro.forward` (-1 if there is none)."""
    body = re.search(r"def forward\(self.*?\n(.*?)\n\s*return", text, re.S)
    return len(re.findall(r"^\s+\w+ = torch\.ops\.", body.group(1), re.M)) if body else -1


def _checkpoints(debug: Path) -> list[tuple[int, float, Path]]:
    out = []
    for p in debug.glob("**/minifier/checkpoints/*.py"):
        m = re.match(r"(\d+)\.py$", p.name)
        if m:
            out.append((int(m.group(1)), p.stat().st_mtime, p))
    return sorted(out)




def _bisect_text(r: dict | None, calls: int, f: Finding) -> str:
    if r is None:
        return ("Compiler bisector: no backend failed (every bisector run of the program passed; the failure may "
                f"depend on the input set or be nondeterministic). Runs: {calls}.\n")
    lines = [f"Compiler bisector (torch._inductor.compiler_bisector) on {f.variant} ({f.backend}):",
             f"  backend:   {r['backend']}  (the first of eager -> aot_eager -> aot_eager_decomp_partition -> inductor that fails)"]
    if r.get("subsystem"):
        lines.append(f"  subsystem: {r['subsystem']}")
        if r.get("bisect_number") is not None:
            lines.append(f"  first bad application: #{r['bisect_number']}" + (f"  ({r['debug_info']})" if r.get("debug_info") else ""))
        sub = r["subsystem"]
        if sub == "lowerings":
            lines.append(f"  meaning: lowering aten op {r.get('debug_info')!r} to Inductor IR introduces the failure "
                         "(disable that one lowering, i.e. fall back to aten, and the program is right)")
        elif sub.endswith("_passes"):
            lines.append(f"  meaning: the Inductor FX pass {r.get('debug_info')!r} ({sub}) introduces the failure")
        elif r.get("bisect_number") == 0:
            lines.append(f"  meaning: changing the config {sub} makes the program right")
    else:
        lines.append("  subsystem: (none identified: the whole backend)")
    lines.append(f"  runs: {calls}")
    return "\n".join(lines) + "\n"


def collect(d: Path, f: Finding, opts: ArtifactOptions) -> dict:
    """Run the debug steps for the finding in folder d; returns the summary (also in meta.json)."""
    summary: dict = {"files": []}
    if f.kind == FindingKind.TIMEOUT:
        return {"skipped": "timeout finding: a rerun would hang again"}
    if not (d / "repro.py").is_file() or f.kind in _NO_TEST_KINDS:
        return {"skipped": f"no standard repro.py for kind {f.kind}"}
    work = Path(tempfile.mkdtemp(prefix="eqsat-artifacts-"))
    try:
        shutil.copy(d / "repro.py", work / "program.py")  # not repro.py: the minifier writes cwd/repro.py
        for p in d.glob("*.pt"):
            shutil.copy(p, work / p.name)
        debug = work / "debug"
        env = _base_env()
        env.update({"TORCH_COMPILE_DEBUG": "1", "TORCH_COMPILE_DEBUG_DIR": str(debug),
                    "TORCH_LOGS": "output_code,graph_breaks,recompiles",
                    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"})
        level, why = _minify_mode(f) if opts.minifier else (None, "minifier off")
        if level:
            env.update({"TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHDYNAMO_REPRO_LEVEL": level})
        rc, text, secs = _run([sys.executable, "program.py"], work, env, opts.timeout)
        (d / "compile_log.txt").write_text(text[-LOG_MAX_CHARS:])
        kept = _keep_debug_files(debug, d, text)
        summary["debug_run"] = {"exit_code": rc, "seconds": round(secs, 2), "timed_out": rc is None,
                                "reproduced": rc not in (0, None),
                                "env": {k: env[k] for k in ("TORCH_COMPILE_DEBUG", "TORCH_LOGS", "TORCHDYNAMO_REPRO_AFTER",
                                                           "TORCHDYNAMO_REPRO_LEVEL") if k in env}}
        summary["files"] += ["compile_log.txt"] + kept
        verdict = repro_verdict(text)
        if verdict:
            summary["debug_run"]["verdict"] = verdict
        if rc == 0:
            summary["debug_run"]["note"] = "the program passed in this rerun (flaky, or input-set dependent)"

        # 2. the after-AOT minifier
        if not level:
            summary["minifier"] = {"status": "not applicable", "why": why}
        else:
            launchers = sorted(debug.glob("**/minifier/minifier_launcher.py"), key=lambda p: p.stat().st_mtime)
            if not launchers:
                summary["minifier"] = {"status": "not applicable", "why":
                                       "Dynamo's after-AOT check did not flag the graph (no minifier_launcher.py): "
                                       + ("its accuracy rule (torch._dynamo.utils.same) passes on this input"
                                          if level == "4" else "no compile/run error after AOT")}
            else:
                before = _checkpoints(work)
                n0 = max((n for n, _, _ in before), default=-1)
                ops0 = _count_ops(launchers[-1].read_text())
                menv = _base_env()
                menv.update({"TORCHINDUCTOR_FX_GRAPH_CACHE": "0"})
                # The launcher replays the dumping run's environment: without its debug dumps and logs
                # every minifier query would write them again.
                launcher = work / "minifier_launcher.py"
                launcher.write_text(re.sub(r"^os\.environ\['(TORCH_COMPILE_DEBUG|TORCH_LOGS)'\].*\n", "",
                                           launchers[-1].read_text(), flags=re.MULTILINE))
                mrc, mtext, msecs = _run([sys.executable, str(launcher), "minify", "--no-isolate"], work, menv,
                                         opts.minifier_timeout)
                (d / "debug").mkdir(exist_ok=True)
                (d / "debug" / "minifier_log.txt").write_text(mtext[-LOG_MAX_CHARS:])
                final = work / "repro.py"
                cps = [c for c in _checkpoints(work) if c[0] < n0 or c not in before]
                src = final if (mrc == 0 and final.is_file()) else (cps[0][2] if cps else None)
                rec = {"seconds": round(msecs, 2), "exit_code": mrc, "ops_before": ops0,
                       "command": "minifier_launcher.py minify --no-isolate"}
                if src is not None:
                    rec["ops_after"] = _portable_minifier_repro(src, d)
                    summary["files"].append("minifier_repro.py")
                smaller = src is not None and 0 <= rec["ops_after"] < ops0
                if mrc == 0:
                    rec["status"] = "minimized" if smaller else "no smaller graph found"
                elif mrc is None:
                    rec["status"] = (f"timed out after {opts.minifier_timeout:.0f} s: smallest checkpoint kept" if smaller
                                     else f"timed out after {opts.minifier_timeout:.0f} s, nothing smaller yet")
                else:
                    tail = [x for x in mtext.strip().splitlines() if x.strip()][-1:] or [""]
                    rec["status"] = f"minifier failed (exit {mrc})" + (": smallest checkpoint kept" if smaller else "")
                    rec["error"] = tail[0][:300]
                summary["minifier"] = rec

        # 3. the compiler bisector
        cls = f.triage or (f.triage_info or {}).get("class")
        if opts.bisect == "none" or (opts.bisect == "accuracy" and cls != "accuracy"):
            summary["bisect"] = {"status": "off", "why": f"--bisect {opts.bisect}"}
        elif is_custom_backend((f.backend or "inductor")):
            summary["bisect"] = {"status": "off", "why": "the compiler bisector bisects Inductor's stages, "
                                 f"not a backend callable ({f.backend})"}
        else:
            backend, bopts = compile_options((f.backend or "inductor"))
            bopts.pop("options", None)  # the program sets its Inductor config at import
            (work / "bisect_run.py").write_text(render("bisect_run.py.j2", device=repr((f.device or "cpu")),
                                                        backend=repr(backend), options=repr(bopts)))
            benv = _base_env()
            benv["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
            brc, btext, bsecs = _run([sys.executable, "bisect_run.py"], work, benv, opts.bisect_timeout)
            (d / "debug").mkdir(exist_ok=True)
            (d / "debug" / "bisect_log.txt").write_text(btext[-LOG_MAX_CHARS:])
            line = next((x for x in btext.splitlines() if x.startswith("@@BISECT@@")), None)
            if line is None:
                summary["bisect"] = {"status": "timed out" if brc is None else f"failed (exit {brc})",
                                     "seconds": round(bsecs, 2)}
            else:
                data = json.loads(line[len("@@BISECT@@"):])
                (d / "bisect.txt").write_text(_bisect_text(data["result"], data["calls"], f))
                summary["bisect"] = {"status": "done", "seconds": round(bsecs, 2), "runs": data["calls"],
                                     **(data["result"] or {"backend": None})}
                summary["files"].append("bisect.txt")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return summary


def _priority(findings: list[Finding]) -> list[Finding]:
    """One finding per (triage class, backend) first, seeds and minimized programs first."""
    seen: set = set()
    first: list = []
    rest: list = []
    for f in sorted(findings, key=lambda f: (f.kind != FindingKind.SEED_MISCOMPILE, len(f.min_ops or f.ops or []))):
        key = (f.triage, f.backend, f.device)
        (rest if key in seen else first).append(f)
        seen.add(key)
    return first + rest


def collect_all(written: list, out: Path, opts: ArtifactOptions, log=lambda s: None) -> tuple[list[Finding], dict]:
    """Artifacts for written findings (`id` set; folders under out/findings), at most opts.max_findings of them,
    opts.jobs at a time: the findings, in order, and meta.json get `debug_artifacts`; returns them and stats."""
    found = [as_finding(f) for f in written]
    todo = [f for f in _priority(found) if f.kind not in (FindingKind.TIMEOUT.value,) + _NO_TEST_KINDS]
    chosen, skipped = todo[:max(0, opts.max_findings)], todo[max(0, opts.max_findings):]
    t0 = time.perf_counter()

    def one(f: Finding) -> Finding:
        d = out / "findings" / str(f.id)
        t1 = time.perf_counter()
        log(f"artifacts: {f.id} (debug rerun, minifier, bisector)")
        try:
            s = collect(d, f, opts)
        except Exception as e:  # our bug: recorded, never fatal for the run
            s = {"error": f"{type(e).__name__}: {e}"}
        s["seconds"] = round(time.perf_counter() - t1, 2)
        return _record(d, f, s)

    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as ex:
        done = list(ex.map(one, chosen))
    done += [_record(out / "findings" / str(f.id), f, {"skipped": f"more than {opts.max_findings} findings (--artifacts-max)"})
             for f in skipped]
    return replaced(found, chosen + skipped, done), {"findings": len(chosen), "skipped": len(skipped),
                                                     "seconds": round(time.perf_counter() - t0, 2)}


def _record(d: Path, f: Finding, s: dict) -> Finding:
    """The finding with the artifacts' summary (a new one) and its meta.json; the next step names the files made;
    test_repro.py states the verdict the repro's rerun printed, where the finding's own was of another program."""
    f = as_finding(f)
    f = f.with_(debug_artifacts=s, **({"triage_info": dict(f.triage_info)} if isinstance(f.triage_info, dict) else {}))
    _set_next_step(d, f)  # (into the new record's own triage_info)
    had_own = bool(f.min_detail)
    if f.minimized_file and not had_own and (s.get("debug_run") or {}).get("verdict") and (d / TEST_REPRO).is_file():
        src = d / "minimized.py"
        if src.is_file():
            write_test_repro(d, src.read_text(), f)
    write_meta(d, f, update=True)
    return f

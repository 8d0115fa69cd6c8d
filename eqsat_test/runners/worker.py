"""Execution worker: a warm subprocess that runs variant modules eager and compiled and judges them.

Protocol: one JSON task per line on stdin, one JSON result per line on stdout (prefixed with
RESULT_TAG so stray prints from torch cannot be mistaken for results). Imports torch, numpy and
our runners only: never egglog, so bundles execute on hosts that have just torch installed.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

import torch

from eqsat_test.runners.checks.devices import KernelRecorder, inputs_digest, kernel_header, kernel_source
from eqsat_test.runners.checks.perf import time_task
from eqsat_test.runners.checks.sweep_run import run_sweep_task
from eqsat_test.runners.exec.alone import run_repro_task
from eqsat_test.runners.exec.batch import run_batch_task
from eqsat_test.runners.exec.compiler_lines import measured
from eqsat_test.runners.exec.training import backward_stage, compile_context, judge_step, training
from eqsat_test.runners.oracle.inputs import InputSet, input_sets
from eqsat_test.runners.oracle.judge import NONDETERMINISTIC
from eqsat_test.runners.oracle.numerics import equal_nan, leaves
from eqsat_test.runners.oracle.referee import referee_crash, referee_mismatch, safely
from eqsat_test.runners.oracle.reference import eager_reference, judge_against
from eqsat_test.runners.oracle.verdict import Verdict
from eqsat_test.runners.protocol import (
    call_compiled,
    compile_options,
    cpu_error,
    error_info,
    exit_with_parent,
    first_line,
    load_module,
    on_cpu,
    open_channel,
    phase,
    program_entry,
    read_task,
    reseed,
    send,
    send_result,
    to_cpu,
    to_device,
    written_leaf,
)
from eqsat_test.runners.records import FindingKind, Result, ResultDraft, ResultStatus, Task, TaskKind


def full_fp32_on_cuda() -> None:
    """float32 matmuls and convolutions in full float32 on CUDA, eager and compiled alike (repro.py
    does the same): with TF32 allowed, cuDNN and cuBLAS pick TF32 or not per algorithm and layout,
    so eager and compiled differ by TF32 rounding, which is no compiler bug."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def warm_up(task: Task) -> Result:
    """One tiny compile on `device` with the run's backend: pays the process's one-time costs
    (imports, Inductor's compile-worker pool and toolchain checks, ~2-3 s on CPU) before the first
    real task; a null compiler (eager, aot_eager) pays only Dynamo's. Its seconds are the result's
    timings["warmup"]."""
    t0 = time.perf_counter()
    torch._dynamo.reset()
    x = torch.randn(4, 4, device=task.device)
    name, opts = compile_options(task.backend or "inductor")
    with torch.no_grad():
        torch.compile(lambda t: (t.relu() * 2).sum(-1), backend=name, **opts)(x)
    torch._dynamo.reset()
    return Result(task=task.id, backend=task.backend, device=task.device, status=ResultStatus.OK,
                  timings={"warmup": time.perf_counter() - t0})


def run_task(task: Task) -> Result:
    """One task's result: a run's, a sweep's, a batch's (its variants' results inside), a warm-up's, a repro's."""
    kind = task.kind
    if task.coverage and kind in (TaskKind.RUN, TaskKind.SWEEP):  # --coverage: compiler lines reached
        return measured(task, lambda t: run_task(t.with_(coverage=None)))
    if kind is TaskKind.WARMUP:  # a spare worker started ahead of its tasks: runners/exec/pool.py
        return warm_up(task)
    if kind is TaskKind.SWEEP:  # dtype/size sweep of the variant: runners/checks/sweeps.py
        return run_sweep_task(task)
    if kind is TaskKind.BATCH:  # K variants in one compile: runners/exec/batch.py
        return run_batch_task(task)
    if kind is TaskKind.REPRO:  # a finding's repro.py alone, fresh compile state: runners/exec/alone.py
        return run_repro_task(task)


    device = torch.device(task.device)
    save_outputs = task.save_outputs  # cross-device runs: keep every output for the judge
    res = ResultDraft(task=task.id, variant=task.variant, backend=task.backend, device=device.type,
                      status=ResultStatus.OK)
    if save_outputs:
        res.file, res.seed, res.save_compiled = task.file, task.seed, task.save_compiled
    t0 = time.perf_counter()
    mod = load_module(task.file)
    mod.DEVICE = device
    # Input sets are made on the CPU (same seed, same values on every device), then moved.
    base = to_device(mod.get_inputs(), torch.device("cpu"))
    sets = input_sets(base, is_param=task.is_param, seed=task.seed, kinds=tuple(task.input_kinds))
    digests = {s.name: inputs_digest(s.inputs) for s in sets} if save_outputs else {}
    host_sets = sets
    if device.type != "cpu":
        sets = [InputSet(s.name, tuple(to_device(list(s.inputs), device))) for s in sets]
    res.timings["load"] = time.perf_counter() - t0
    # training mode (runners/exec/training.py): the program is a forward and backward step
    train = training(mod, sets[0].inputs) if task.grad else None
    forward, index_sources = (train.step, train.index_sources) if train else (mod.forward, mod.index_sources)
    if train is not None:
        res.training = {"random": train.random, "not_differentiated": list(train.step.skip)}

    # Eager reference, twice (nondeterminism), and fp64. An input set other than the given one that the
    # program itself refuses (random class indices past the classes, a cross-entropy target outside
    # [0, 1]) is set aside, not judged; on a GPU it is tried on the CPU first (protocol.cpu_error).
    phase("eager")
    t0 = time.perf_counter()
    refs = []
    for s, on_host in zip(sets, host_sets):
        try:
            refused = cpu_error(mod, on_host.inputs) if device.type == "cuda" and s.name != "given" else None
            if refused is None:
                r = eager_reference(forward, index_sources, s, cpu_forward=None if train else on_cpu(mod))
        except Exception as e:
            if s.name == "given":
                res.status, res.error, res.input_set = ResultStatus.EAGER_ERROR, error_info(e), s.name
                return res.freeze()
            refused = first_line(e)
        if refused is not None:
            res.set_aside = {**(res.set_aside or {}), s.name: refused}
            continue
        refs.append(r)
        ref, fp64, idx = r.ref, r.fp64, r.idx
        if r.compute_dtype:
            res.compute_dtype = r.compute_dtype
        if task.save_eager:
            out = Path(task.save_eager) / f"{s.name}.pt"
            out.parent.mkdir(parents=True, exist_ok=True)
            torch.save(to_cpu(ref), out)
            # the fp64 run: the cross-device judge's reference; a seed's (and in training mode every program's)
            # the unsound-rewrite check's yardstick
            if fp64 is not None and (save_outputs or task.save_fp64 or train is not None):
                torch.save(to_cpu(fp64), out.with_suffix(".fp64.pt"))
            if save_outputs:  # tie-aware indices
                if idx:
                    torch.save(to_cpu(idx), out.with_suffix(".idx.pt"))
    if not refs:  # (no given set among the kinds asked for, and the program refuses every other)
        res.status, res.input_set = ResultStatus.EAGER_ERROR, sets[0].name
        res.error = error_info(RuntimeError(f"the program raises on every input set: {res.set_aside}"))
        return res.freeze()
    res.timings["eager"] = time.perf_counter() - t0

    backend, opts = compile_options(task.backend)
    phase("compile")
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()  # per-task graph-break counts (_dynamo_stats)
    entry, wrap = program_entry(mod, train=train is not None)  # a program that writes its inputs: as it writes them
    compiled = wrap(torch.compile(entry, backend=backend, **opts))
    writes = list(getattr(mod, "WRITES", None) or []) if train is None else []
    if writes:
        res.writes = writes
    recording = backend == "inductor" and KernelRecorder.install()
    if recording:
        KernelRecorder.start()

    def keep_kernels() -> None:  # a failure on this task: keep Inductor's code beside its outputs
        if not (recording and task.save_compiled):
            return
        try:
            text = kernel_source(res.kernel_files or [], header=kernel_header(res.variant, res.backend, device.type))
            if text:
                folder = Path(task.save_compiled)
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "kernel_source.py").write_text(text)
                res.kernel_source_file = str(folder / "kernel_source.py")
        except OSError:
            pass

    try:
        with compile_context(res.backend) if train else contextlib.nullcontext():
            _run_compiled(task, res, train.compiled(compiled) if train else compiled, opts, refs, device, digests,
                          save_outputs, train,
                          forward=None if train else mod.forward, writes=writes)
        failed = next((e for e in res.input_sets if e.get("part") == "gradient"), None)
        if failed is not None:  # which stage of the backward: aot_eager, Inductor's decompositions, its kernels
            failed["grad_stage"] = backward_stage(mod.forward, next(r for r in refs if r.set.name == failed["name"]),
                                                  train, res.backend)
    finally:
        if recording:
            res.kernel_files = KernelRecorder.stop()
    if res.status != ResultStatus.OK or any(not e["ok"] for e in res.input_sets):
        keep_kernels()
    res.dynamo = _dynamo_stats(entry)
    if task.perf and res.status == ResultStatus.OK and refs:  # runners/checks/perf.py: warm, repeated, median
        try:
            res.perf = time_task(task, compiled, mod.forward, refs[0][0].inputs, device)
        except Exception as e:
            res.perf_error = error_info(e)
    return res.freeze()


def _dynamo_stats(fn) -> dict:
    """Graph breaks and recompilations of this task's compile (for triage): Dynamo's counters
    (cleared per task by torch._dynamo.reset) and the compiled versions of `fn`'s frame."""
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
        from torch._dynamo.utils import counters
        breaks: dict = counters.get("graph_break") or {}
        stats: dict = counters.get("stats") or {}
        out = {"graph_breaks": int(sum(breaks.values())), "unique_graphs": int(stats.get("unique_graphs", 0)),
               "recompiles": max(0, len(_debug_get_cache_entry_list(fn.__code__)) - 1)}
        if breaks:
            out["first_break"] = next(iter(breaks)).splitlines()[0][:300]
        return out
    except Exception:
        return {}


def _run_compiled(task: Task, res: ResultDraft, compiled, opts, refs, device, digests, save_outputs, train=None,
                  forward=None, writes=()) -> None:
    """Each input set compiled and judged; where eager and compiled disagree (or compiled raises), the
    independent referee (runners/oracle/referee.py) says which side is wrong (forward programs only).
    writes: the inputs the program writes, whose final values come last in its result: a failing one is named."""
    first = True
    for r in refs:
        s = r.set
        t0 = time.perf_counter()
        try:
            reseed()
            with torch.no_grad():
                got = call_compiled(compiled, s.inputs, opts)
            if device.type == "cuda":
                torch.cuda.synchronize()
        except Exception as e:
            res.status = ResultStatus.COMPILE_CRASH if first else ResultStatus.RUN_CRASH
            res.error, res.input_set = error_info(e), s.name
            if forward is not None:
                res.referee = safely(referee_crash, forward, list(s.inputs), r.ref)
            return
        dt = time.perf_counter() - t0
        res.timings["compile" if first else "run"] = res.timings.get("compile" if first else "run", 0.0) + dt
        first = False
        v, grad_info = judge_step(r, got, train) if train else (judge_against(r, got), {})
        entry = {"name": s.name, **v.to_dict(), **grad_info}
        if train is None and v.kind != NONDETERMINISTIC:  # eager is deterministic here: is the compiled program?
            try:
                again = _compiled_again(r, got, compiled, opts, device, v)
            except Exception as e:  # noqa: BLE001 - a second call that raises is a crash of its own kind
                again = {"ok": False, "kind": FindingKind.COMPILED_NONDETERMINISTIC.value,
                         "detail": f"a second call of the compiled program on these inputs raises {first_line(e)}"}
            if again is not None:
                v = Verdict.from_dict({**v.to_dict(), **again})
                entry.update(again)
                if refs[0] is not r:  # the calls before this set's: the repro makes them first (repro_warmup.py.j2)
                    entry["warmup"] = [list(p.set.inputs) for p in refs[:refs.index(r)]]
        written = None if v.ok else written_leaf(v.leaf, len(got) if isinstance(got, (list, tuple)) else 1, writes)
        if written is not None:
            entry["written_input"] = written
        if not v.ok and v.kind != NONDETERMINISTIC and forward is not None:
            entry["referee"] = safely(referee_mismatch, forward, list(s.inputs), r.ref, got, v.leaf, v.failing)
        if s.name in digests:
            entry["inputs_digest"] = digests[s.name]
        if task.save_compiled and (save_outputs or not v.ok):
            folder = Path(task.save_compiled)
            folder.mkdir(parents=True, exist_ok=True)
            if entry.get("warmup"):
                torch.save(to_cpu(entry["warmup"]), folder / f"{s.name}.warmup.pt")
                entry["warmup_file"] = str(folder / f"{s.name}.warmup.pt")
        entry.pop("warmup", None)
        if task.save_compiled and (save_outputs or not v.ok):
            folder = Path(task.save_compiled)
            torch.save(to_cpu(got), folder / f"{s.name}.out.pt")
            if not v.ok:
                torch.save(to_cpu(list(s.inputs)), folder / f"{s.name}.inputs.pt")
                entry["inputs_file"] = str(folder / f"{s.name}.inputs.pt")
        res.input_sets.append(entry)


def _compiled_again(r, got, compiled, opts, device, v) -> dict | None:
    """A second call of the compiled program on the same inputs (eager, run twice, gave the same bits): None where
    it gives the first call's bits and leaves them as they were; else, where either call is wrong, the verdict's
    fields for a compiled-nondeterministic finding (a stale output from an earlier call, an output overwritten by a
    later one, a race). Two calls that differ but both pass the oracle are nondeterminism it accepts: None."""
    before = torch.utils._pytree.tree_map(lambda t: t.detach().clone() if isinstance(t, torch.Tensor) else t, got)
    reseed()
    with torch.no_grad():
        again = call_compiled(compiled, r.set.inputs, opts)
    if device.type == "cuda":
        torch.cuda.synchronize()
    changed, moved = _first_difference(before, again), _first_difference(before, got)
    if changed is None and moved is None:
        return None
    v2 = judge_against(r, again)
    if v.ok and v2.ok and moved is None:
        return None
    if moved is not None:
        what = f"the second call changed the first call's output{moved[0]} after it was returned ({moved[1]})"
    else:
        assert changed is not None
        what = f"two calls on these inputs differ at output{changed[0]} ({changed[1]})"
    wrong = "" if v.ok and v2.ok else f"; the {'first' if not v.ok else 'second'} call is wrong: " + (
        v.detail if not v.ok else v2.detail)
    return {"ok": False, "kind": FindingKind.COMPILED_NONDETERMINISTIC.value,
            "detail": f"compiled program not deterministic where eager is: {what}{wrong}",
            "leaf": v.leaf if not v.ok else v2.leaf, "max_abs_err": max(v.max_abs_err, v2.max_abs_err),
            "max_rel_err": max(v.max_rel_err, v2.max_rel_err)}


def _first_difference(a, b) -> tuple[str, str] | None:
    """(leaf path, what differs) at the first leaf where `a` and `b` are not the same bits (NaN equals NaN)."""
    la, lb = leaves(a), leaves(b)
    if [p for p, _ in la] != [p for p, _ in lb]:
        return "", "the structure differs"
    for (path, x), (_, y) in zip(la, lb):
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return path, f"{tuple(x.shape)}/{x.dtype} vs {tuple(y.shape)}/{y.dtype}"
            n = int((~equal_nan(x.cpu(), y.cpu())).sum())
            if n:
                return path, f"{n} of {x.numel()} elements"
        elif x != y and not (x != x and y != y):
            return path, f"{x!r} vs {y!r}"
    return None


def main() -> None:
    exit_with_parent()
    # Results go to the real stdout; everything else (torch's prints) to stderr.
    open_channel(os.fdopen(os.dup(1), "w", buffering=1))
    full_fp32_on_cuda()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    send({"ready": True, "pid": os.getpid()})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            task = read_task(line)
        except Exception as e:  # a line that is no task: the pool's bug, reported, not fatal for the worker
            send_result(Result(status=ResultStatus.INTERNAL_ERROR, error=error_info(e)))
            continue
        try:
            res = run_task(task)
        except Exception as e:  # our own bug, reported, not fatal for the worker
            res = Result(task=task.id, variant=task.variant, backend=task.backend,
                         device=task.device, status=ResultStatus.INTERNAL_ERROR, error=error_info(e))
        lost = cuda_context_error() if task.device == "cuda" else None
        if lost is not None:  # the pool ends this worker: the next task gets a fresh process (runners/exec/pool.py)
            res = res.with_(cuda_context_lost=lost)
        send_result(res)


def cuda_context_error() -> str | None:
    """None while this process's CUDA context works. A device-side assert (an index out of range in a kernel,
    reported late: kernels run asynchronously) leaves every later CUDA call failing: its first line then."""
    if not torch.cuda.is_initialized():
        return None
    try:
        torch.cuda.synchronize()
        torch.empty(1, device="cuda").add_(1).item()
    except Exception as e:  # noqa: BLE001 - whatever the broken context raises
        return first_line(e)
    return None


if __name__ == "__main__":
    main()

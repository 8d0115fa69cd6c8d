"""Execution worker: a warm subprocess that runs variant modules eager and compiled and judges them.

Protocol: one JSON task per line on stdin, one JSON result per line on stdout (prefixed with
RESULT_TAG so stray prints from torch cannot be mistaken for results). Imports torch, numpy and
our runners only: never egglog, so bundles execute on hosts that have just torch installed.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

RESULT_TAG = "@@EQSAT-RESULT@@ "


def _load_module(path: str):
    name = "eqsat_variant_" + str(abs(hash(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _error(e: BaseException) -> dict:
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    msg = str(e).strip().splitlines()
    chain, c, seen = [], e.__cause__ or e.__context__, set()
    while c is not None and id(c) not in seen and len(chain) < 8:  # for triage (runners/triage.py)
        seen.add(id(c))
        first = str(c).strip().splitlines()
        chain.append({"type": type(c).__name__, "module": type(c).__module__, "message": first[0][:300] if first else ""})
        c = c.__cause__ or c.__context__
    return {"type": type(e).__name__, "module": type(e).__module__,
            "message": msg[0][:500] if msg else "", "traceback": "".join(tb)[-6000:],
            "stack": "".join(traceback.format_tb(e.__traceback__))[-4000:], "chain": chain}


def compile_options(backend: str) -> tuple[str, dict]:
    """Backend spec -> (torch.compile backend, options). Specs: inductor, eager, aot_eager,
    cudagraphs, inductor-max-autotune, inductor-reduce-overhead, inductor-dynamic,
    and inductor+<config>=<value>,... for Inductor config overrides."""
    opts: dict = {}
    config: dict = {}
    if "+" in backend:
        backend, cfg = backend.split("+", 1)
        for item in cfg.split(","):
            k, _, v = item.partition("=")
            try:
                config[k] = json.loads(v) if v else True
            except json.JSONDecodeError:  # an unquoted string, as shells leave `key="text"`
                config[k] = v
    if backend == "inductor-max-autotune":
        backend, opts["mode"] = "inductor", "max-autotune"
    elif backend == "inductor-reduce-overhead":
        backend, opts["mode"] = "inductor", "reduce-overhead"
    elif backend == "inductor-dynamic":
        backend, opts["dynamic"] = "inductor", True
    if config:
        opts["options"] = config
    return backend, opts


def warm_up(device: str) -> dict:
    """One tiny compile on `device`: pays the process's one-time Inductor costs (imports, the
    compile-worker pool, toolchain checks; ~2-3 s on CPU) before the first real task."""
    import torch

    t0 = time.perf_counter()
    torch._dynamo.reset()
    x = torch.randn(4, 4, device=device)
    with torch.no_grad():
        torch.compile(lambda t: (t.relu() * 2).sum(-1))(x)
    torch._dynamo.reset()
    return {"warmup": device, "status": "ok", "seconds": time.perf_counter() - t0}


def run_task(task: dict) -> dict:
    import torch

    if task.get("warmup"):  # a spare worker started ahead of its tasks: runners/execute.py
        return warm_up(task["warmup"])
    if task.get("sweep_only"):  # dtype/size sweep of the variant: runners/sweeps.py
        from runners.sweeps import run_sweep_task
        return run_sweep_task(task)
    if task.get("batch"):  # K variants in one compile: runners/batch.py
        from runners.batch import run_batch_task
        return run_batch_task(task)

    from runners.devices import KernelRecorder, inputs_digest, kernel_header, kernel_source, to_device
    from runners.inputs import InputSet, input_sets, to_fp64_inputs
    from runners.oracle import judge

    device = torch.device(task.get("device", "cpu"))
    save_outputs = bool(task.get("save_outputs"))  # cross-device runs: keep every output for the judge
    res: dict = {"task": task.get("id"), "variant": task["variant"], "backend": task["backend"],
                 "device": device.type, "status": "ok", "input_sets": [], "timings": {}}
    if save_outputs:
        res.update(file=task["file"], seed=task.get("seed", 0), save_compiled=task.get("save_compiled"))
    t0 = time.perf_counter()
    mod = _load_module(task["file"])
    mod.DEVICE = device
    # Input sets are made on the CPU (same seed, same values on every device), then moved.
    base = to_device(mod.get_inputs(), torch.device("cpu"))
    is_param = task.get("is_param")
    sets = input_sets(base, is_param=is_param, seed=task.get("seed", 0),
                      kinds=tuple(task.get("input_kinds", ("given", "random", "special"))))
    digests = {s.name: inputs_digest(s.inputs) for s in sets} if save_outputs else {}
    if device.type != "cpu":
        sets = [InputSet(s.name, tuple(to_device(list(s.inputs), device))) for s in sets]
    res["timings"]["load"] = time.perf_counter() - t0

    # Eager reference, twice (nondeterminism), and fp64.
    _phase("eager")
    t0 = time.perf_counter()
    refs = []
    for s in sets:
        torch.manual_seed(0)
        try:
            with torch.no_grad():
                ref = mod.forward(*s.inputs)
                # no reseed: a program that draws random numbers must show it by differing
                ref2 = mod.forward(*s.inputs)
                idx = mod.index_sources(*s.inputs)
        except Exception as e:
            res["status"] = "eager-error"
            res["error"] = _error(e)
            res["input_set"] = s.name
            return res
        fp64 = None
        try:
            with torch.no_grad():
                torch.manual_seed(0)
                fp64 = mod.forward(*to_fp64_inputs(s.inputs))
        except Exception:
            fp64 = None
        refs.append((s, ref, ref2, fp64, idx))
        if task.get("save_eager"):
            out = Path(task["save_eager"]) / f"{s.name}.pt"
            out.parent.mkdir(parents=True, exist_ok=True)
            torch.save(_cpu(ref), out)
            if save_outputs:  # the cross-device judge's fp64 reference and tie-aware indices
                if fp64 is not None:
                    torch.save(_cpu(fp64), out.with_suffix(".fp64.pt"))
                if idx:
                    torch.save(_cpu(idx), out.with_suffix(".idx.pt"))
    res["timings"]["eager"] = time.perf_counter() - t0

    backend, opts = compile_options(task["backend"])
    _phase("compile")
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()  # per-task graph-break counts (_dynamo_stats)
    compiled = torch.compile(mod.forward, backend=backend, **opts)
    recording = backend == "inductor" and KernelRecorder.install()
    if recording:
        KernelRecorder.start()

    def keep_kernels() -> None:  # a failure on this task: keep Inductor's code beside its outputs
        if not (recording and task.get("save_compiled")):
            return
        try:
            text = kernel_source(res.get("kernel_files") or [], header=kernel_header(
                {"variant": task["variant"], "backend": task["backend"], "device": device.type}))
            if text:
                folder = Path(task["save_compiled"])
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "kernel_source.py").write_text(text)
                res["kernel_source_file"] = str(folder / "kernel_source.py")
        except OSError:
            pass

    try:
        _run_compiled(task, res, compiled, opts, refs, device, digests, save_outputs, judge)
    finally:
        if recording:
            res["kernel_files"] = KernelRecorder.stop()
    if res["status"] != "ok" or any(not e["ok"] for e in res["input_sets"]):
        keep_kernels()
    res["dynamo"] = _dynamo_stats(mod.forward)
    if task.get("perf") and res["status"] == "ok" and refs:  # runners/perf.py: warm, repeated, median
        from runners.perf import time_task
        try:
            res["perf"] = time_task(task, compiled, mod.forward, refs[0][0].inputs, device)
        except Exception as e:
            res["perf_error"] = _error(e)
    return res


def _dynamo_stats(fn) -> dict:
    """Graph breaks and recompilations of this task's compile (for triage): Dynamo's counters
    (cleared per task by torch._dynamo.reset) and the compiled versions of `fn`'s frame."""
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list
        from torch._dynamo.utils import counters
        breaks = counters.get("graph_break") or {}
        out = {"graph_breaks": int(sum(breaks.values())),
               "unique_graphs": int((counters.get("stats") or {}).get("unique_graphs", 0)),
               "recompiles": max(0, len(_debug_get_cache_entry_list(fn.__code__)) - 1)}
        if breaks:
            out["first_break"] = next(iter(breaks)).splitlines()[0][:300]
        return out
    except Exception:
        return {}


def _run_compiled(task, res, compiled, opts, refs, device, digests, save_outputs, judge) -> None:
    import torch
    first = True
    for s, ref, ref2, fp64, idx in refs:
        t0 = time.perf_counter()
        try:
            torch.manual_seed(0)
            with torch.no_grad():
                got = compiled(*s.inputs)
                if opts.get("mode") == "reduce-overhead":  # CUDA graphs replay from the 2nd call
                    got = compiled(*s.inputs)
            if device.type == "cuda":
                torch.cuda.synchronize()
        except Exception as e:
            res["status"] = "compile-crash" if first else "run-crash"
            res["error"] = _error(e)
            res["input_set"] = s.name
            return
        dt = time.perf_counter() - t0
        res["timings"]["compile" if first else "run"] = res["timings"].get("compile" if first else "run", 0.0) + dt
        first = False
        v = judge_input_set(judge, s, ref, got, fp64, ref2, idx)
        entry = {"name": s.name, **v.to_dict()}
        if s.name in digests:
            entry["inputs_digest"] = digests[s.name]
        if task.get("save_compiled") and (save_outputs or not v.ok):
            folder = Path(task["save_compiled"])
            folder.mkdir(parents=True, exist_ok=True)
            torch.save(_cpu(got), folder / f"{s.name}.out.pt")
            if not v.ok:
                torch.save(_cpu(list(s.inputs)), folder / f"{s.name}.inputs.pt")
                entry["inputs_file"] = str(folder / f"{s.name}.inputs.pt")
        res["input_sets"].append(entry)


_OUT = None  # the real stdout (results channel), set by main()


def _phase(name: str) -> None:
    if _OUT is not None:
        print(RESULT_TAG + json.dumps({"phase": name}), file=_OUT, flush=True)


def judge_input_set(judge, s, ref, got, fp64, ref2, idx):
    """The verdict on one input set: single tasks and batches (runners/batch.py) judge alike."""
    return judge(ref, got, fp64, ref2=ref2, index_info=idx, extreme_inputs=s.name.startswith("special"))


def _cpu(x):
    import torch
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, (list, tuple)):
        return type(x)(_cpu(i) for i in x) if not hasattr(x, "_fields") else tuple(_cpu(i) for i in x)
    if isinstance(x, dict):
        return {k: _cpu(v) for k, v in x.items()}
    return x


def main() -> None:
    # Results go to the real stdout; everything else (torch's prints) to stderr.
    global _OUT
    out = _OUT = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import torch  # noqa: F401  (warm the import before the first task)
    print(RESULT_TAG + json.dumps({"ready": True, "pid": os.getpid()}), file=out, flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        task = json.loads(line)
        try:
            res = run_task(task)
        except Exception as e:  # our own bug, reported, not fatal for the worker
            res = {"task": task.get("id"), "variant": task.get("variant"), "status": "internal-error",
                   "error": _error(e), "input_sets": [], "backend": task.get("backend"),
                   "device": task.get("device", "cpu"), "timings": {}}
        print(RESULT_TAG + json.dumps(res), file=out, flush=True)


if __name__ == "__main__":
    main()

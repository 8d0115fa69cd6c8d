"""Devices: identical input sets on every device, cross-device verdicts (device-mismatch) and the Inductor code kept for findings.

Execution side only: torch and our runners, never egglog.

- Input sets are made on the CPU from the bundle's saved inputs and the seed, then moved to the
  device (`to_device`), so a variant's "random-0" set is bit-for-bit the same on cpu and cuda and
  compiled outputs of the two devices can be compared (`inputs_digest` proves it per set).
- Cross-device verdict (`judge_across_devices`), Dynamo style, against the CPU fp64 eager output
  of the same variant and input set: device d's compiled output is the odd one out when it fails
  the oracle both against the other device's compiled output and against d's own eager output.
  Honest device differences (eager differs across devices the same way, a different but equally
  accurate summation order, tie-broken indices) pass one of the two. Ints, bools and NaN/Inf
  positions are exact in both comparisons.
- Attribution (`cross_device_findings`): when d is the odd one out and d's same-device check
  already reported a miscompile, that finding gets a `cross_device` note saying the fault is
  d's alone; when d's same-device check could not see it (eager nondeterministic there, or a
  tolerance loosened by d's own fp64 run) a `device-mismatch` finding is made for d.
- Kernel source (`KernelRecorder`): the paths of the modules Inductor loads through
  `PyCodeCache.load_by_key_path` (its output code, with every Triton/C++ kernel inside) are
  recorded for each task; nothing is read unless a finding needs them (`kernel_source`).
"""
from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.exec.backend_code import backend_code, script_options
from eqsat_test.runners.oracle.inputs import input_sets
from eqsat_test.runners.oracle.judge import judge
from eqsat_test.runners.protocol import load_tensors, to_cpu, to_device
from eqsat_test.runners.records import Finding, FindingKind, Result, ResultStatus, as_finding, new_finding

DEVICE_MISMATCH = FindingKind.DEVICE_MISMATCH
SAME_DEVICE_BUG_KINDS = (FindingKind.MISCOMPILE.value, FindingKind.SEED_MISCOMPILE.value, FindingKind.GRAD_MISCOMPILE.value)
KERNEL_SOURCE_FILE = "kernel_source.py"
KERNEL_SOURCE_MAX_CHARS = 2_000_000


# ----------------------------------------------------------------------------------------------
# devices and inputs


def cuda_available() -> bool:
    try:
        import torch
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def inputs_digest(inputs: Any) -> str:
    """A short hash of the values, dtypes, shapes and strides of (nested) inputs, device-independent."""
    import torch
    h = hashlib.sha256()

    def walk(x: Any) -> None:
        if isinstance(x, torch.Tensor):
            t = x.detach()
            h.update(f"T{t.dtype}{tuple(t.shape)}{tuple(t.stride())}".encode())
            if t.numel():
                flat = t.cpu().contiguous().reshape(-1)
                h.update(flat.view(torch.uint8).numpy().tobytes())
        elif isinstance(x, dict):
            h.update(b"{")
            for k, v in x.items():
                h.update(repr(k).encode())
                walk(v)
            h.update(b"}")
        elif isinstance(x, (list, tuple)):
            h.update(b"[")
            for v in x:
                walk(v)
            h.update(b"]")
        else:
            h.update(repr(x).encode())

    walk(inputs)
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------------------------
# the cross-device verdict


def judge_across_devices(outs: dict, fp64: Any = None, *, index_info: dict | None = None) -> dict:
    """Which device's compiled output is the odd one out, for one variant and input set.

    outs: device -> {"eager": output, "compiled": output}, exactly two devices, on any device
    (compared on the CPU). fp64: the CPU eager output of the same program in float64 (None:
    plain allclose at the dtype's tolerance). Returns device -> {"outlier": bool,
    "vs_other": Verdict, "vs_eager": Verdict}."""
    devs = list(outs)
    if len(devs) != 2:
        raise ValueError(f"judge_across_devices needs two devices, got {devs}")
    cpu = {d: {k: to_cpu(v) for k, v in o.items()} for d, o in outs.items()}
    f = to_cpu(fp64)
    res = {}
    for d in devs:
        o = devs[1] if d == devs[0] else devs[0]
        vs_other = judge(cpu[o]["compiled"], cpu[d]["compiled"], f, index_info=index_info)
        vs_eager = judge(cpu[d]["eager"], cpu[d]["compiled"], f, index_info=index_info)
        res[d] = {"outlier": (not vs_other.ok) and (not vs_eager.ok), "vs_other": vs_other, "vs_eager": vs_eager}
    return res


def cross_device_findings(manifest: Manifest, results: list[Result], scratch: Path, findings: list,
                          notes: list | None = None) -> tuple[list[Finding], list[Finding]]:
    """Compare compiled outputs of the same variant, backend and input set across two devices.

    Returns `findings`, in their order, the same-device miscompiles among them annotated with
    `cross_device`, and the new `device-mismatch` findings (one per variant, backend and odd device: its first
    odd input set). Needs what the worker saves for tasks with `save_outputs` (compiled:
    save_compiled/<set>.out.pt; eager: scratch/eager/<variant>__<device>/<set>.pt, .fp64.pt, .idx.pt)."""
    by_key: dict[tuple, dict[str, Result]] = {}
    for r in results:
        if r.status == ResultStatus.OK and r.save_compiled:
            by_key.setdefault((r.variant, r.backend), {})[r.device] = r
    findings = [as_finding(f) for f in findings]
    new: list[Finding] = []
    for (vid, backend), per_dev in sorted(by_key.items()):
        if len(per_dev) < 2:
            continue
        devs = ["cpu", next(d for d in sorted(per_dev) if d != "cpu")] if "cpu" in per_dev else sorted(per_dev)[:2]
        ref_dev = devs[0]  # the fp64 reference: the CPU's when the CPU ran
        sets = {d: {s.name: s for s in per_dev[d].input_sets} for d in devs}
        v = manifest.variant(vid)
        verdicts: dict[str, dict] = {}  # input set -> judge_across_devices result
        for name in [n for n in sets[devs[0]] if n in sets[devs[1]]]:
            da, db = (sets[d][name].inputs_digest for d in devs)
            if da and db and da != db:
                if notes is not None:
                    notes.append(new_finding(FindingKind.INTERNAL_ERROR, variant=vid, backend=backend,
                                             device="/".join(devs), input_set=name,
                                             detail=f"input set {name} differs across devices ({da} vs {db}); "
                                                    f"not compared"))
                continue
            paths = {d: {"compiled": Path(str(per_dev[d].save_compiled)) / f"{name}.out.pt",
                         "eager": scratch / "eager" / f"{vid}__{d}" / f"{name}.pt"} for d in devs}
            if not all(p.is_file() for d in devs for p in paths[d].values()):
                continue
            eager_dir = scratch / "eager" / f"{vid}__{ref_dev}"
            fp64 = load_tensors(eager_dir / f"{name}.fp64.pt") if (eager_dir / f"{name}.fp64.pt").is_file() else None
            idx = load_tensors(eager_dir / f"{name}.idx.pt") if (eager_dir / f"{name}.idx.pt").is_file() else None
            outs = {d: {k: load_tensors(p) for k, p in paths[d].items()} for d in devs}
            verdicts[name] = judge_across_devices(outs, fp64, index_info=idx or None)
        if not verdicts:
            continue
        for d in devs:
            o = devs[1] if d == devs[0] else devs[0]
            odd = [n for n, vd in verdicts.items() if vd[d]["outlier"]]
            same_dev = [i for i, f in enumerate(findings) if f.variant == vid and f.backend == backend
                        and f.device == d and f.kind in SAME_DEVICE_BUG_KINDS]
            for i in same_dev:
                f = findings[i]
                name = f.input_set if f.input_set in verdicts else (odd[0] if odd else next(iter(verdicts)))
                vd = verdicts[name]
                if vd[d]["outlier"]:
                    text = (f"compiled on {d} disagrees with compiled on {o} and with eager on {d} (against CPU "
                            f"fp64): " + ("the compiled outputs of both devices are off" if vd[o]["outlier"]
                                          else f"the fault is {d}'s alone (compiled on {o} is fine)"))
                else:
                    text = (f"compiled on {d} is not the odd one out against compiled on {o} (against CPU fp64) "
                            f"on input set {name}: eager on {d} may be the odd one out")
                findings[i] = f.with_(cross_device={
                    "other_device": o, "input_set": name, "outlier": vd[d]["outlier"],
                    "other_outlier": vd[o]["outlier"], "detail": text, "vs_other": vd[d]["vs_other"].detail})
            if not odd or same_dev:
                continue
            name = odd[0]
            vd = verdicts[name][d]
            g = manifest.graph(v.graph)
            new.append(new_finding(
                DEVICE_MISMATCH,
                {"variant": vid, "graph": v.graph, "backend": backend, "device": d, "other_device": o,
                 "rules": list(v.rules), "mode": v.mode, "ops": sorted(set(g.op_names))},
                input_set=name, odd_input_sets=odd,
                max_abs_err=vd["vs_other"].max_abs_err, max_rel_err=vd["vs_other"].max_rel_err,
                leaf=vd["vs_other"].leaf, same_device_verdict=sets[d][name].kind,
                detail=f"compiled {d} vs compiled {o}: {vd['vs_other'].detail}; "
                       f"compiled {d} vs eager {d}: {vd['vs_eager'].detail}",
                failing_inputs=_inputs_file(v, g, per_dev[d], name, scratch),
                kernel_files=per_dev[d].kernel_files or [],
            ))
    return findings, new


def _inputs_file(v: Variant, g: Graph, r: Result, name: str, scratch: Path) -> str | None:
    """The input set `name` of variant v, rebuilt on the CPU (deterministic) and saved for a finding."""
    import torch

    if not r.file:
        return None
    bundle = Path(r.file)
    for _ in Path(v.file).parts:  # the variant's file is bundle/<v.file>
        bundle = bundle.parent
    src = bundle / g.inputs_file
    if not src.is_file():
        return None
    try:
        base = to_device(torch.load(src, weights_only=True), "cpu")
        kind = name.split("-", 1)[0]
        for s in input_sets(base, is_param=list(g.is_param) or None, seed=int(r.seed or 0), kinds=(kind,)):
            if s.name == name:
                out = scratch / "device-inputs" / f"{v.id}__{name}.inputs.pt"
                out.parent.mkdir(parents=True, exist_ok=True)
                torch.save(list(s.inputs), out)
                return str(out)
    except Exception:
        return None
    return None


# ----------------------------------------------------------------------------------------------
# Inductor's generated code


class KernelRecorder:
    """Records the files of the Python modules Inductor loads (its output code and kernels).

    Installs a thin wrapper around `PyCodeCache.load_by_key_path` once per process; `start()`
    begins a task's list, `stop()` returns it. Cache hits are recorded too (the wrapper sees
    every load). Costs one list append per loaded module."""

    _lock = threading.Lock()
    _installed = False
    _current: list | None = None

    @classmethod
    def install(cls) -> bool:
        with cls._lock:
            if cls._installed:
                return True
            try:
                from torch._inductor.codecache import PyCodeCache
            except Exception:
                return False
            orig = PyCodeCache.__dict__.get("load_by_key_path")
            func = getattr(orig, "__func__", None)
            if func is None:
                return False

            def load_by_key_path(klass, *args, **kwargs):
                mod = func(klass, *args, **kwargs)
                paths = cls._current
                if paths is not None:
                    p = getattr(mod, "__file__", None) or kwargs.get("path") or (args[1] if len(args) > 1 else None)
                    if p:
                        paths.append(str(p))
                return mod

            PyCodeCache.load_by_key_path = classmethod(load_by_key_path)
            cls._installed = True
            return True

    @classmethod
    def start(cls) -> None:
        cls._current = []

    @classmethod
    def stop(cls) -> list[str]:
        paths, cls._current = cls._current or [], None
        seen: dict[str, None] = {}
        for p in paths:
            seen.setdefault(p, None)
        return list(seen)


def _is_output_code(text: str) -> bool:
    return "def call(" in text or "def runner(" in text or "async_compile.wait(" in text


def kernel_source(paths: list[str], *, header: str = "") -> str | None:
    """One file's text from the recorded modules: Inductor's output code (it embeds every kernel),
    or, when no output code was recorded, every module recorded. None when nothing is readable."""
    texts = []
    for p in paths:
        try:
            texts.append((p, Path(p).read_text()))
        except OSError:
            continue
    if not texts:
        return None
    main = [(p, t) for p, t in texts if _is_output_code(t)] or texts
    parts = [header.rstrip() + "\n"] if header else []
    for p, t in main:
        parts.append(f"# ===== {p} =====\n{t.rstrip()}\n")
    out = "\n".join(parts)
    if len(out) > KERNEL_SOURCE_MAX_CHARS:
        out = out[:KERNEL_SOURCE_MAX_CHARS] + "\n# ... truncated by eqsat-test ...\n"
    return out


def kernel_artifacts(f: Finding, result: Result | None = None) -> dict:
    """{"kernel_source.py": text} for a finding, from the worker's saved copy or the recorded
    paths (still in Inductor's cache); {} when the backend generated no code we could find."""
    saved = (result.kernel_source_file if result is not None else None) or f.kernel_source_file
    if saved and Path(saved).is_file():
        return {KERNEL_SOURCE_FILE: Path(saved).read_text()}
    paths = f.kernel_files or (result.kernel_files if result is not None else None) or []
    text = kernel_source(paths, header=kernel_header(f.variant, f.backend, f.device))
    return {KERNEL_SOURCE_FILE: text} if text else {}


def kernel_header(variant: str | None, backend: str | None, device: str | None) -> str:
    return (f"# Inductor output code (with its kernels) for variant {variant}, backend "
            f"{backend}, device {device}: the whole variant, before any minimization.\n"
            f"# Kept by eqsat-test from Inductor's code cache; the kernels are the strings passed to "
            f"async_compile.triton(...) / cpp_pybinding(...).")




def device_repro_main(f: Finding) -> str:
    """The `__main__` part of a device-mismatch finding's repro.py (appended to the variant module's code)."""
    spec = (f.backend or "inductor")
    prelude, backend_expr = backend_code(spec)
    opts, config = script_options(spec)
    cfg = ""
    if config:
        cfg = "import torch._inductor.config as _inductor_config\n" + "".join(
            f"_inductor_config.{k} = {v!r}\n" for k, v in config.items())
    return render("device_repro_main.py.j2", **{
        "backend_label": spec, "backend_expr": backend_expr, "backend_prelude": prelude, "opts": "".join(f", {k}={v!r}" for k, v in opts.items()),
        "device": (f.device or "cuda"), "other": (f.other_device or "cpu"),
        "rules": (" after rewriting with: " + ", ".join(f.rules)) if f.rules else "",
        "detail": " ".join(str((f.detail or "")).split())[:400], "config": cfg,
    })

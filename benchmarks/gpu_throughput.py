"""Variants checked per minute, compiled on the GPU vs compiled on the CPU: the same bundles, side by side in one run; prints the ratio.

    python benchmarks/gpu_throughput.py BUNDLE [BUNDLE ...] [--jobs N] [--backend inductor] [--inputs given,random]

Each device gets the same bundles, the same worker count and a cold Inductor/Triton cache of its
own (every variant is a new program, so cold compiles are what a run pays). A "variant checked"
is one task: a variant (or seed) run eager, in fp64 and compiled on every input set, and judged.
With --both (default) it also times `--device cuda --device cpu` in one exec, the mode that adds
the device-mismatch judge. Needs a CUDA GPU and torch only (bundles are made elsewhere; with
egglog, `python tests/test_gpu.py gpu_bundles` makes small ones).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def run(bundles: list[Path], devices: tuple, args, out: Path, cache: Path) -> dict:
    from eqsat_test.runners.pipeline import ExecOptions, execute_bundle
    fields = {f.name for f in dataclasses.fields(ExecOptions)}
    kw = dict(backends=tuple(args.backend), devices=devices, jobs=args.jobs, timeout=args.timeout,
              input_kinds=tuple(args.inputs.split(",")), progress=False, collect_env=False,
              env={"TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"), "TRITON_CACHE_DIR": str(cache / "triton")})
    if "minimize" in fields:
        kw["minimize"] = False  # throughput of checking, not of shrinking findings
    opts = ExecOptions(**kw)
    tasks = bugs = 0
    compile_s = 0.0
    t0 = time.perf_counter()
    for b in bundles:
        rep = execute_bundle(b, out / b.name, opts)
        tasks += rep["executed"]
        bugs += rep["stats"]["compiler_bugs"]
        compile_s += rep["stats"]["exec_timings"].get("compile", 0.0)
    wall = time.perf_counter() - t0
    per_device = tasks / len(devices)
    return {"devices": "+".join(devices), "tasks": tasks, "variants": per_device, "wall_s": wall,
            "variants_per_min": per_device / wall * 60, "compile_s_per_task": compile_s / max(1, tasks),
            "findings": bugs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+", type=Path)
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--backend", "-b", action="append", default=None)
    ap.add_argument("--inputs", default="given,random")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--no-both", dest="both", action="store_false")
    ap.add_argument("--out", type=Path, default=None, help="Results folder (default: a temporary one).")
    ap.add_argument("--json", type=Path, default=None, help="Also write the numbers here.")
    args = ap.parse_args()
    args.backend = args.backend or ["inductor"]

    import torch
    if not torch.cuda.is_available():
        sys.exit("gpu_throughput: needs a CUDA GPU")
    root = args.out or Path(tempfile.mkdtemp(prefix="eqsat-gpu-bench-"))
    machine = (f"{torch.cuda.get_device_name(0)}, {os.cpu_count()} CPU cores, torch {torch.__version__}, "
               f"{args.jobs} workers, backend {'/'.join(args.backend)}, inputs {args.inputs}")
    print(f"gpu_throughput: {len(args.bundles)} bundle(s) on {machine}", flush=True)
    rows = []
    for devices in [("cuda",), ("cpu",)] + ([("cuda", "cpu")] if args.both else []):
        name = "+".join(devices)
        row = run(args.bundles, devices, args, root / name, root / f"cache-{name}")
        rows.append(row)
        print(f"  {name:<9} {row['variants']:>5.0f} variants in {row['wall_s']:7.1f} s = "
              f"{row['variants_per_min']:7.1f} variants/min  (compile {row['compile_s_per_task']:.2f} s/task, "
              f"{row['findings']} findings)", flush=True)
    gpu, cpu = rows[0], rows[1]
    ratio = gpu["variants_per_min"] / cpu["variants_per_min"]
    print(f"  ratio compiled-GPU / compiled-CPU throughput: {ratio:.2f}x")
    if args.both:
        both = rows[2]
        print(f"  both devices in one exec (with the device-mismatch judge): {both['wall_s']:.1f} s vs "
              f"{gpu['wall_s'] + cpu['wall_s']:.1f} s for the two runs apart")
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "rows": rows, "ratio_gpu_over_cpu": ratio}, indent=1))


if __name__ == "__main__":
    main()

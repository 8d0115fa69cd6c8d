"""Batched compiles: K variants of a model compiled one by one vs as one program, in one process each.

    python benchmarks/batch_compile.py [MODEL.py ...] [-n 8] [--compile-threads 1]

For each model, generates N variants (rewrite.generate, the built-in rules), then times, in two
fresh processes with their own Inductor cache (holding only the toolchain set-up):
  alone: each variant's `forward` compiled and run after `torch._dynamo.reset()`;
  batch: one function calling every variant's `forward` on its own copy of the inputs (what
         runners/exec/batch.py compiles), compiled and run once.
Each process first warms Inductor with one tiny compile, as eqsat-test's workers do. Prints the
seconds of both and their ratio: what `--batch` can save on graphs of that size.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, machine, table  # noqa: E402
from benchmarks.throughput import fresh_cache  # noqa: E402

CHILD = r'''
import importlib.util, sys, time
import torch
from eqsat_test.runners.worker import warm_up

mode, files = sys.argv[1], sys.argv[2:]
mods = []
for i, f in enumerate(files):
    spec = importlib.util.spec_from_file_location(f"variant{i}", f)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    spec.loader.exec_module(m)
    mods.append(m)
warm_up("cpu")
copies = [[x.clone() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()] for m in mods]
t0 = time.perf_counter()
with torch.no_grad():
    if mode == "alone":
        for m, ins in zip(mods, copies):
            torch._dynamo.reset()
            torch.compile(m.forward)(*ins)
    else:
        counts = [len(ins) for ins in copies]
        def batched(*flat):
            outs, pos = [], 0
            for m, n in zip(mods, counts):
                outs.append(m.forward(*flat[pos:pos + n]))
                pos += n
            return tuple(outs)
        torch._dynamo.reset()
        torch.compile(batched)(*[x for ins in copies for x in ins])
print(time.perf_counter() - t0)
'''


def timed(mode: str, files: list[Path], scratch: Path, threads: int) -> float:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(fresh_cache(scratch)),
               TORCHINDUCTOR_COMPILE_THREADS=str(threads), PYTHONPATH=str(REPO))
    p = subprocess.run([sys.executable, "-c", CHILD, mode] + [str(f) for f in files], capture_output=True,
                       text=True, env=env, cwd=scratch, check=True)
    return float(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", default=[str(REPO / "examples" / "elementwise.py"),
                                                   str(REPO / "examples" / "mlp.py")])
    ap.add_argument("-n", "--variants", type=int, default=8)
    ap.add_argument("--compile-threads", type=int, default=1, help="as in eqsat-test's workers when --jobs > 1")
    args = ap.parse_args(argv)
    from eqsat_test.rewrite.generate import GenerateOptions, generate

    scratch = Path(tempfile.mkdtemp(prefix="eqsat-batch-"))
    print(f"machine: {machine()}; load average at start {os.getloadavg()[0]:.1f}")
    rows = []
    for model in map(Path, args.models):
        m = generate(model, scratch / model.stem, GenerateOptions(variants=args.variants))
        files = [scratch / model.stem / v.file for v in m.variants if not v.seed]
        alone = timed("alone", files, scratch, args.compile_threads)
        batch = timed("batch", files, scratch, args.compile_threads)
        rows.append([model.name, sum(g.ops for g in m.graphs), len(files), f"{alone:.2f}", f"{batch:.2f}",
                     f"{alone / batch:.2f}x"])
        print(table(rows[-1:], HEADER), flush=True)
    print()
    print(table(rows, HEADER))


HEADER = ["model", "ops", "variants", "one by one s", "one batch s", "saving (one by one / batch)"]

if __name__ == "__main__":
    main()

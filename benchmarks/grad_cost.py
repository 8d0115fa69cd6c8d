"""The cost of training mode per variant: the same programs run as worker tasks in inference mode and in training mode (forward and backward compiled, run and judged), side by side in one run.

    python benchmarks/grad_cost.py [MODEL.py ...] [--variants 4] [--backend inductor] [--device cpu|cuda]

Each model's bundle is generated once for training mode (the model in train(), rules that keep
gradients); then every program of it (the seed and its variants) runs as a task of two warm workers
(runners/worker.py), one per mode, alternately, on the same input sets (given, random,
special). Per mode it prints the mean seconds per program of the task's stages: eager (eager twice
and the fp64 run: forward only, or forward and backward), compile (the first compiled call: Dynamo,
AOTAutograd, Inductor; in training mode the forward and the backward graphs), run (the later compiled
calls) and the task's wall time, and the ratio training / inference. Each worker has an Inductor
cache of its own, as one run would (a kernel it compiled once it loads after), and the FX graph and
AOTAutograd caches are off (every task compiles its graphs).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, machine, table  # noqa: E402

MODELS = [REPO / "examples" / "mlp.py", REPO / "examples" / "conv_block.py", REPO / "examples" / "attention.py",
          REPO / "benchmarks" / "corpus" / "norm_layer_norm.py", REPO / "benchmarks" / "corpus" / "transformer_gpt2_block.py"]
STAGES = ("eager", "compile", "run")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path, default=MODELS)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from eqsat_test.runners.exec.pool import PoolOptions, worker

    print(f"grad_cost: {machine()}, {time.strftime('%Y-%m-%d')}, {args.backend} on {args.device}; one warm worker per mode, "
          f"each with its own Inductor cache; FX graph and AOTAutograd caches off")
    rows, totals = [], {m: {k: 0.0 for k in (*STAGES, "wall")} for m in ("inference", "training")}
    with tempfile.TemporaryDirectory(prefix="eqsat-grad-cost-") as tmp:
        workers = {mode: worker(k, PoolOptions(timeout=1800, env={
            "TORCHINDUCTOR_CACHE_DIR": str(Path(tmp) / f"cache-{mode}"), "TRITON_CACHE_DIR": str(Path(tmp) / f"triton-{mode}"),
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"})) for k, mode in enumerate(("inference", "training"))}
        for w in workers.values():  # each worker's start and first compile, before the timed tasks
            w.run({"kind": "warmup", "device": args.device, "backend": args.backend, "id": "warmup"})
        for model in args.models:
            bundle = Path(tmp) / model.stem
            manifest = generate(model, bundle, GenerateOptions(variants=args.variants, train=True))
            per = {m: {k: 0.0 for k in (*STAGES, "wall")} for m in ("inference", "training")}
            n = 0
            for v in manifest.variants:
                g = manifest.graph(v.graph)
                for mode in ("inference", "training"):
                    task = {"id": v.id, "variant": v.id, "file": str(bundle / v.file), "backend": args.backend,
                            "is_param": list(g.is_param), "grad": mode == "training", "device": args.device}
                    t0 = time.perf_counter()
                    res = workers[mode].run(task)
                    wall = time.perf_counter() - t0
                    if res["status"] != "ok":
                        print(f"  {model.stem} {v['id']} {mode}: {res['status']} "
                              f"{(res.get('error') or {}).get('message', '')[:200]}", file=sys.stderr)
                    for k in STAGES:
                        per[mode][k] += res["timings"].get(k, 0.0)
                    per[mode]["wall"] += wall
                n += 1
            for mode in per:
                for k in per[mode]:
                    totals[mode][k] += per[mode][k]
            rows.append([model.stem, n, *(f"{per['inference'][k] / n:.2f}/{per['training'][k] / n:.2f}"
                                          for k in (*STAGES, "wall")),
                         f"{per['training']['wall'] / max(per['inference']['wall'], 1e-9):.2f}x"])
            print(table([rows[-1]], ["model", "programs", *STAGES, "wall", "training/inference"]).splitlines()[-1],
                  flush=True)
        for w in workers.values():
            w.kill()
    print()
    print("seconds per program, inference/training:")
    print(table(rows, ["model", "programs", *STAGES, "wall", "training/inference (wall)"]))
    ratio = {k: totals["training"][k] / max(totals["inference"][k], 1e-9) for k in (*STAGES, "wall")}
    print("all models, training / inference: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratio.items()))


if __name__ == "__main__":
    main()

"""Training mode against planted backward faults, through the whole command line: detection rate per fault backend and false alarms of the identity, side by side in one run.

    python benchmarks/grad_detection.py [MODEL.py ...] [--variants 2] [--device cpu]

Every fault of examples/backends/grad_faulty_backends.py (forward exact, the backward wrong in one
place: a gradient scaled by 1.001, zeroed, negated, one element off by 1%, a saved activation rounded
to bfloat16, a saved activation read one element off) and the identity (plain AOTAutograd with nop
compilers) run `eqsat-test MODEL --grad --backend FILE.py:FAULT` on each model (default: the bundled
examples and the relu MLP of the tests). A run detects its fault when it reports a grad-miscompile
(confirmed alone from its repro.py); the identity must report nothing. Detection rate = runs with a
grad-miscompile / runs; false alarms = identity runs with any compiler-bug finding.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import REPO, machine, table  # noqa: E402

FAULTS_FILE = REPO / "examples" / "backends" / "grad_faulty_backends.py"
FAULTS = ("grad_scaled", "grad_zeroed", "grad_negated", "grad_one_element", "saved_bf16", "saved_shifted")
MODELS = [REPO / "examples" / f"{m}.py" for m in ("mlp", "conv_block", "attention", "elementwise", "relu_convnet")] \
    + [REPO / "tests" / "models" / "relu_mlp.py"]
COMPILER_BUG_KINDS = {"miscompile", "seed-miscompile", "compile-crash", "run-crash", "timeout", "device-mismatch",
                      "config-mismatch", "grad-miscompile"}


def run(model: Path, backend: str, variants: int, device: str, out: Path) -> dict:
    cmd = [sys.executable, "-m", "eqsat_test.runners.cli", "run", str(model), "--grad", "--backend", backend,
           "-n", str(variants), "--device", device, "--jobs", "1", "--no-sweep", "--no-artifacts", "--no-minimize",
           "--timeout", "300", "--json", "--out", str(out)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"rc": p.returncode, "error": p.stderr[-400:], "seconds": time.perf_counter() - t0}
    kinds = [f["kind"] for f in report["findings"] if f["kind"] in COMPILER_BUG_KINDS]
    stages = sorted({str(f.get("grad_stage")) for f in report["findings"] if f["kind"] == "grad-miscompile"})
    return {"rc": p.returncode, "kinds": kinds, "stages": stages, "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*", type=Path, default=MODELS)
    ap.add_argument("--variants", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--faults", default=",".join(FAULTS))
    args = ap.parse_args()
    print(f"grad_detection: {machine()}, {time.strftime('%Y-%m-%d')}, device {args.device}")
    faults = [f for f in args.faults.split(",") if f]
    rows, per_fault = [], {f: [0, 0] for f in ["identity", *faults]}
    with tempfile.TemporaryDirectory(prefix="eqsat-grad-detect-") as tmp:
        for model in args.models:
            for fault in ["identity", *faults]:
                r = run(model, f"{FAULTS_FILE}:{fault}", args.variants, args.device, Path(tmp) / f"{model.stem}-{fault}")
                if "error" in r:
                    rows.append([model.stem, fault, f"error rc={r['rc']}", "", f"{r['seconds']:.0f}"])
                    print(f"  {model.stem} {fault}: {r['error']}", file=sys.stderr)
                    continue
                hit = "grad-miscompile" in r["kinds"] if fault != "identity" else bool(r["kinds"])
                per_fault[fault][0] += hit
                per_fault[fault][1] += 1
                rows.append([model.stem, fault, ",".join(r["kinds"]) or "-", ",".join(r["stages"]), f"{r['seconds']:.0f}"])
                print(table([rows[-1]], ["model", "backend", "compiler-bug kinds", "stage", "s"]).splitlines()[-1],
                      flush=True)
    print()
    print(table(rows, ["model", "backend", "compiler-bug kinds", "stage", "s"]))
    print()
    summary = [[f, f"{hit}/{n}", "false alarms" if f == "identity" else "detected"] for f, (hit, n) in per_fault.items()]
    print(table(summary, ["backend", "runs", "counted"]))
    found = sum(h for f, (h, _) in per_fault.items() if f != "identity")
    total = sum(n for f, (_, n) in per_fault.items() if f != "identity")
    print(f"detection rate {found}/{total} ({100 * found / max(1, total):.0f}%), identity false alarms "
          f"{per_fault['identity'][0]}/{per_fault['identity'][1]}")


if __name__ == "__main__":
    main()

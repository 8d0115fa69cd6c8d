"""What a finding costs: one small model's variants, the same sweeps, run under a planted-fault backend (a finding) and under the identity backend (none), side by side in one run; with --base, an older checkout's pair too.

    python benchmarks/finding_cost.py [MODEL] [--variants 16] [--fault one_wrong_element] [--base DIR] [--repeat N]

The variants are generated once (`eqsat-test generate MODEL -n N`); every arm then runs the same bundle with
eqsat-test's defaults (`eqsat-test exec BUNDLE --backend FILE:FN`: sweeps, confirmation, minimization, and
whatever the checkout does after them), so both backends run the same programs and the same sweep points.
The backends are examples/backends/faulty_backends.py's, as benchmarks/oracle_detection.py uses them: each
runs Dynamo's graph eagerly; `identity` returns its outputs, FAULT corrupts them (one element, by default),
so the only difference between the arms is the finding and what it costs. The arms run interleaved (fault,
identity, fault, identity ...; the older checkout's pair, then this one's) so that load from other work falls
on all. Printed per arm: wall and CPU seconds (the whole process tree), the stages (tasks, confirm, minimize,
prove, artifacts), root causes; then fault/identity per checkout, for the execution alone and for the whole
run (generation's seconds, measured once, added to both).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.cli_run import REPO, bug_findings, checkout_label, run_cli, stages  # noqa: E402
from benchmarks.common import machine, table  # noqa: E402

FAULTS = REPO / "examples" / "backends" / "faulty_backends.py"
GOAL = 1.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", type=Path, default=REPO / "benchmarks" / "fault_seeds" / "multi_out.py")
    ap.add_argument("--variants", "-n", type=int, default=16)
    ap.add_argument("--fault", default="one_wrong_element", help="a fault of examples/backends/faulty_backends.py")
    ap.add_argument("--base", type=Path, default=None, help="an older checkout to run side by side")
    ap.add_argument("--repeat", type=int, default=1)
    a = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="eqsat-finding-cost-"))
    bundle = scratch / "bundle"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "generate", str(a.model), "-n", str(a.variants),
                    "-o", str(bundle)], cwd=REPO, check=True, capture_output=True)
    gen = time.monotonic() - t0
    checkouts = ([("older", a.base)] if a.base else []) + [("this", REPO)]
    print(f"machine: {machine()}; model {a.model}, {a.variants} variants (generated once: {gen:.1f} s); "
          f"fault {a.fault} vs identity, default options")
    for name, c in checkouts:
        print(f"  {name}: {checkout_label(c)}")
    runs: dict[tuple[str, str], list[dict]] = {}
    for k in range(a.repeat):
        for name, checkout in checkouts:
            for backend in ((a.fault, "identity") if k % 2 == 0 else ("identity", a.fault)):
                out = scratch / f"{name}-{backend}-{k}"
                r = run_cli(["exec", str(bundle), "--backend", f"{FAULTS}:{backend}"], out, checkout)
                r["stages"] = stages(r["report"])
                runs.setdefault((name, backend), []).append(r)
                print(f"  {name} {backend} #{k}: rc {r['rc']}, wall {r['wall_s']} s, cpu {r['cpu_s']} s; "
                      + ", ".join(f"{s} {v:.1f}" for s, v in r["stages"].items() if v is not None), flush=True)
    med = lambda rs, key: statistics.median(r[key] for r in rs)  # noqa: E731
    rows = []
    for (name, backend), rs in runs.items():
        st = rs[-1]["stages"]
        rows.append([name, backend, f"{med(rs, 'wall_s'):.1f}", f"{med(rs, 'cpu_s'):.1f}",
                     *(f"{st[s]:.1f}" if st[s] is not None else "-" for s in ("exec", "confirm", "minimize", "prove",
                                                                               "artifacts")),
                     len(rs[-1]["report"].get("clusters") or []), len(bug_findings(rs[-1]["report"]))])
    print(table(rows, ["checkout", "backend", "wall s", "cpu s", "tasks s", "confirm s", "minimize s", "prove s",
                       "artifacts s", "root causes", "candidates"]))
    for name, _ in checkouts:
        f, i = runs[(name, a.fault)], runs[(name, "identity")]
        print(f"{name}: fault/identity: exec {med(f, 'wall_s') / med(i, 'wall_s'):.2f}x wall, "
              f"{med(f, 'cpu_s') / med(i, 'cpu_s'):.2f}x cpu; whole run (generation added to both) "
              f"{(gen + med(f, 'wall_s')) / (gen + med(i, 'wall_s')):.2f}x wall (goal: at most {GOAL:g}x)")


if __name__ == "__main__":
    main()

"""Wall time of the default `eqsat-test MODEL.py` run, and when its first verdicts and findings landed (from OUT/verdicts.jsonl)."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one(model: str, extra: list[str]) -> dict:
    out = Path(tempfile.mkdtemp(prefix="eqsat-default-"))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", model, "--out", str(out), *extra],
                       cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - t0
    lines = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()] if (out / "verdicts.jsonl").is_file() else []
    results = [x for x in lines if x["type"] == "result"]
    finds = [x for x in lines if x["type"] == "finding"]
    rep = json.loads((out / "results.json").read_text())["report"] if (out / "results.json").is_file() else {}
    return {"model": model, "exit": p.returncode, "wall_s": round(wall, 1), "tasks": len(results),
            "first_verdict_s": results[0]["seconds"] if results else None,
            "findings_written_s": finds[0]["seconds"] if finds else None,
            "compiler_bugs": (rep.get("stats") or {}).get("compiler_bugs"),
            "notes": (rep.get("stats") or {}).get("notes"), "out": str(out)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--extra", default="", help="more eqsat-test options, space-separated")
    a = ap.parse_args()
    print(f"{'model':<40} {'exit':>4} {'wall s':>7} {'tasks':>5} {'1st verdict s':>13} {'findings at s':>13} bugs notes")
    for m in a.models:
        r = one(m, a.extra.split())
        print(f"{r['model']:<40} {r['exit']:>4} {r['wall_s']:>7} {r['tasks']:>5} {str(r['first_verdict_s']):>13} "
              f"{str(r['findings_written_s']):>13} {r['compiler_bugs']} {r['notes']}", flush=True)


if __name__ == "__main__":
    main()

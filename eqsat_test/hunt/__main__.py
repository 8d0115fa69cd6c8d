"""`python -m eqsat_test.hunt`: print (or write) the program of a seed, or serve programs to a hunt: seeds in on stdin, one a line; for each, the file written and a JSON line out."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from eqsat_test.hunt.check import check_source
from eqsat_test.hunt.program import GenOptions, draw_program


def program_file(folder: Path, seed: int) -> Path:
    return folder / f"p{seed}.py"


def make_one(seed: int, opts: GenOptions, folder: Path | None) -> dict:
    """Draw, render and check the program of `seed`; write it to folder/p<seed>.py when it passes."""
    t0 = time.monotonic()
    try:
        prog = draw_program(seed, opts)
    except Exception as e:  # noqa: BLE001 - the generator's own failure: reported, the hunt goes on
        return {"seed": seed, "ok": False, "stage": "generate", "reason": f"{type(e).__name__}: {e}"[:300],
                "seconds": round(time.monotonic() - t0, 4)}
    source = prog.source()
    verdict = check_source(source, f"p{seed}.py")
    out = {"seed": seed, **verdict.to_dict(), "record": prog.record(), "seconds": round(time.monotonic() - t0, 4)}
    if verdict.ok and folder is not None:
        path = program_file(folder, seed)
        path.write_text(source)
        out["path"] = str(path)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eqsat_test.hunt", description=__doc__)
    ap.add_argument("--seed", type=int, help="print the program of this seed (or write it: --out)")
    ap.add_argument("--out", type=Path, help="with --seed: the file to write")
    ap.add_argument("--serve", type=Path, metavar="DIR", help="read seeds on stdin, write DIR/p<seed>.py, answer JSON")
    ap.add_argument("--no-inplace", action="store_true", help="no in-place ops or writes to inputs")
    args = ap.parse_args(argv)
    opts = GenOptions(inplace=not args.no_inplace)
    if args.serve is not None:
        args.serve.mkdir(parents=True, exist_ok=True)
        for line in sys.stdin:
            if not line.strip():
                continue
            print(json.dumps(make_one(int(line), opts, args.serve)), flush=True)
        return 0
    if args.seed is None:
        ap.error("give --seed N or --serve DIR")
    source = draw_program(args.seed, opts).source()
    if args.out:
        args.out.write_text(source)
    else:
        sys.stdout.write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())

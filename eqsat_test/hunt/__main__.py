"""`python -m eqsat_test.hunt`: print (or write) the program of a seed (or the window of a seed cut from a model file), or serve programs to a hunt: seeds in on stdin, one a line (`window SEED` for a window of the served model files); for each, the file written and a JSON line out."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from eqsat_test.hunt.check import check_source
from eqsat_test.hunt.program import GenOptions, draw_program
from eqsat_test.hunt.sources import display_path, model_files, source_order
from eqsat_test.hunt.windows import WINDOWS_VERSION, CutError, window_of


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
    return _checked(seed, prog.source(), prog.record(), folder, t0)


def _checked(seed: int, source: str, record: dict, folder: Path | None, t0: float) -> dict:
    """check_source's verdict on the program `source` of `seed`, written to folder/p<seed>.py when it passes."""
    verdict = check_source(source, f"p{seed}.py")
    out = {"seed": seed, **verdict.to_dict(), "record": record, "seconds": round(time.monotonic() - t0, 4)}
    if verdict.ok and folder is not None:
        path = program_file(folder, seed)
        path.write_text(source)
        out["path"] = str(path)
    return out


SOURCE_TRIES = 8  # model files a window seed tries before it is discarded


def make_window(seed: int, files: list[str], folder: Path | None) -> dict:
    """Cut, render and check the window of `seed` from the first of its files (source_order) that yields one; write
    it to folder/p<seed>.py when it passes. A seed none of whose SOURCE_TRIES files yields a window is discarded at
    stage capture or cut (the last file's reason)."""
    t0 = time.monotonic()
    record: dict = {}
    error = CutError("cut", "no model file to cut from")
    for source in source_order(seed, files)[:SOURCE_TRIES]:
        record = {"kind": "window", "seed": seed, "version": f"windows-{WINDOWS_VERSION}", "source": display_path(source)}
        try:
            window = window_of(seed, source)
            break
        except CutError as e:
            error = e
        except Exception as e:  # noqa: BLE001 - the cutter's own failure: reported, the hunt goes on
            return {"seed": seed, "ok": False, "stage": "generate", "reason": f"{type(e).__name__}: {e}"[:300],
                    "record": record, "seconds": round(time.monotonic() - t0, 4)}
    else:
        return {"seed": seed, "ok": False, "stage": error.stage, "reason": error.reason, "record": record,
                "seconds": round(time.monotonic() - t0, 4)}
    return _checked(seed, window.source(), window.record(), folder, t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eqsat_test.hunt", description=__doc__)
    ap.add_argument("--seed", type=int, help="print the program of this seed (or write it: --out)")
    ap.add_argument("--out", type=Path, help="with --seed: the file to write")
    ap.add_argument("--serve", type=Path, metavar="DIR", help="read seeds on stdin, write DIR/p<seed>.py, answer JSON")
    ap.add_argument("--no-inplace", action="store_true", help="no in-place ops or writes to inputs")
    ap.add_argument("--window", type=int, metavar="SEED", help="print the window of this seed cut from --source")
    ap.add_argument("--source", type=Path, help="with --window: the model file the window is cut from")
    ap.add_argument("--windows-from", nargs="+", default=[], metavar="PATH",
                    help="with --serve: the model files (or folders of them) `window SEED` lines cut from")
    args = ap.parse_args(argv)
    opts = GenOptions(inplace=not args.no_inplace)
    if args.serve is not None:
        args.serve.mkdir(parents=True, exist_ok=True)
        files = model_files(args.windows_from)
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            if words[0] == "window":
                print(json.dumps(make_window(int(words[1]), files, args.serve)), flush=True)
            else:
                print(json.dumps(make_one(int(words[0]), opts, args.serve)), flush=True)
        return 0
    if args.window is not None:
        if args.source is None:
            ap.error("--window needs --source FILE")
        try:
            source = window_of(args.window, args.source).source()
        except CutError as e:
            print(f"python -m eqsat_test.hunt: no window (stage {e.stage}): {e.reason}", file=sys.stderr)
            return 1
    elif args.seed is None:
        ap.error("give --seed N, --window N --source FILE, or --serve DIR")
    else:
        source = draw_program(args.seed, opts).source()
    if args.out:
        args.out.write_text(source)
    else:
        sys.stdout.write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main())

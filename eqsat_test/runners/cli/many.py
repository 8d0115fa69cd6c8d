"""`eqsat-test run A.py B.py ...`: several model files one after another in one process, on the same warm workers.

What a run of one small model pays before its first task (the interpreter, torch and egglog imported, the rule
library read, a worker started with torch imported and Inductor warmed) is paid once here for all of them; each
model still gets its own output folder, summary, time budget and exit code. A model whose run fails (bad input,
an internal error) is said in one line and the next one runs.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from eqsat_test.runners.cli.endings import is_bad_input
from eqsat_test.runners.protocol import model_end_line, model_start_line
from eqsat_test.runners.records import ExitCode

# the run's exit code: the worst of its models', in this order
SEVERITY = (ExitCode.INTERNAL, ExitCode.USAGE, ExitCode.INTERRUPTED, ExitCode.FOUND, ExitCode.OK)


def worst(codes: list[int]) -> int:
    return next((int(c) for c in SEVERITY if int(c) in codes), int(ExitCode.OK))


def run_many(runs: list[tuple[Path, Path]], one: Callable[[Path, Path], int], log: Callable[[str], None]) -> int:
    """Run `one(model, out)` for each (model, out), on workers kept warm from one model to the next; the worst
    exit code. An interruption (Ctrl-C) stops the lot, as it stops one run."""
    from eqsat_test.runners.exec.pool import keep_warm  # (imported when a run starts, as the pipeline is)
    codes = []
    with keep_warm():
        for k, (model, out) in enumerate(runs, 1):
            log(model_start_line(k, len(runs), model, out))
            try:
                codes.append(int(one(model, out)))
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as e:  # noqa: BLE001 - one model's failure is its own: said, and the next one runs
                bad = is_bad_input(e)
                log(f"{model}: {'error' if bad else 'internal error'}: {type(e).__name__}: {e}")
                codes.append(int(ExitCode.USAGE if bad else ExitCode.INTERNAL))
            log(model_end_line(k, len(runs), codes[-1]))
    log(f"{len(runs)} models: " + ", ".join(f"{m.name} exit {c}" for (m, _), c in zip(runs, codes)))
    return worst(codes)

"""Shared helpers for the benchmark scripts: rule loading, timing, machine description, tables."""
from __future__ import annotations

import os
import platform
import sys
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = Path(__file__).resolve().parent / "models"
if str(REPO) not in sys.path:  # `python benchmarks/x.py` as well as `python -m benchmarks.x`
    sys.path.insert(0, str(REPO))


def compiled_rules(specs=(), log=print):
    """Compile the rules named by `specs` (default: the built-in library). A rule that fails to
    compile is skipped and counted, so a library under edit still benchmarks."""
    from eqsat_test.rewrite.compile_rules import compile_rules
    from eqsat_test.rewrite.ruledsl import load_rules
    rules = load_rules(list(specs) or None)
    try:
        compiled, errors = compile_rules(rules)
    except Exception:  # one rule crashes the compiler: compile them one by one
        compiled, errors = [], []
        for r in rules:
            try:
                c, e = compile_rules([r])
                compiled += c
                errors += e
            except Exception as ex:  # noqa: BLE001
                errors.append(f"rule {r.name}: {type(ex).__name__}: {ex}")
    log(f"rules: {len(rules)} loaded, {len(compiled)} compiled rewrites, {len(errors)} rule errors "
        f"({'built-in library' if not specs else ', '.join(map(str, specs))})")
    return rules, compiled, errors


class Timer:
    """Accumulates wall seconds (`t`) and this process's CPU seconds (`cpu`) per stage name.
    CPU seconds are the steadier figure for one-threaded stages on a shared, loaded machine."""

    def __init__(self) -> None:
        self.t: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.t[stage] = self.t.get(stage, 0.0) + time.perf_counter() - t0
            self.cpu[stage] = self.cpu.get(stage, 0.0) + time.process_time() - c0


def machine() -> str:
    import torch
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, torch {torch.__version__}")


def table(rows: list[list], header: list[str]) -> str:
    cells = [header] + [[str(c) for c in r] for r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r))  # noqa: E731
    return "\n".join([line(cells[0]), line(["-" * x for x in w])] + [line(r) for r in cells[1:]])

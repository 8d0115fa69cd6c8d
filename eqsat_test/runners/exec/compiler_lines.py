"""Lines of the compiler's own Python source (torch/_inductor, _functorch, _decomp, _refs) that a task reaches.

The worker side of `--coverage` (a measurement mode, off by default): `LineRecorder` records which
lines of those packages execute while a task runs, with coverage.py where it is installed and
with `sys.monitoring` (Python 3.12+) where it is not. `measured(task, fn)` runs a worker task under
it, with every compile cache off (a cache hit skips the compiler and hides its lines), and writes
the lines to the task's file; runners/checks/line_gain.py compares the tasks of a run.

Lines are counted after the worker's warm-up compile: code that runs once per process (lazy
initialisation) belongs to no task. A line counts once per task however often it runs.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Callable

from eqsat_test.runners.records import Result, Task

SCOPES = ("_inductor", "_functorch", "_decomp", "_refs")  # packages under torch/ that are measured
CACHE_ENV = {  # every compile cache off, for worker processes started in coverage mode
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
    "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
    "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
}


class CoverageUnavailable(RuntimeError):
    """Neither coverage.py nor sys.monitoring (Python 3.12+) is available."""


def torch_root() -> str:
    import torch
    return os.path.dirname(os.path.abspath(torch.__file__))


def backend_name() -> str:
    """"coverage.py" or "sys.monitoring": what `LineRecorder` uses on this interpreter."""
    try:
        import coverage  # noqa: F401
        return "coverage.py"
    except ImportError:
        if hasattr(sys, "monitoring"):
            return "sys.monitoring"
    raise CoverageUnavailable("--coverage needs coverage.py (pip install coverage) or Python 3.12+")


class LineRecorder:
    """`start()`, run something, `stop()` -> {path relative to torch/: sorted line numbers}."""

    def __init__(self, scopes: tuple[str, ...] = SCOPES) -> None:
        self.root = torch_root()
        self.prefixes = tuple(os.path.join(self.root, s) + os.sep for s in scopes)
        self.backend = backend_name()
        self._cov = None
        self._seen: dict[str, set[int]] = {}

    def start(self) -> None:
        if self.backend == "coverage.py":
            import coverage
            self._cov = coverage.Coverage(data_file=None, branch=False, config_file=False,
                                          include=[p + "*" for p in self.prefixes])
            self._cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured",
                                                          "already-imported"])
            self._cov.start()
        else:
            self._start_monitoring()

    def stop(self) -> dict[str, list[int]]:
        if self.backend == "coverage.py":
            cov, self._cov = self._cov, None
            cov.stop()
            data = cov.get_data()
            raw = {f: data.lines(f) or [] for f in data.measured_files()}
        else:
            raw = self._stop_monitoring()
        n = len(self.root) + 1
        return {f[n:]: sorted(ls) for f, ls in sorted(raw.items()) if f.startswith(self.prefixes) and ls}

    # -- sys.monitoring (Python 3.12+): each line is reported once, then disabled at its location
    def _start_monitoring(self) -> None:
        mon = sys.monitoring
        tool = mon.COVERAGE_ID
        if mon.get_tool(tool) is not None:  # a previous recorder of this process
            mon.free_tool_id(tool)
        mon.use_tool_id(tool, "eqsat-test")
        self._seen = {}
        seen, prefixes, disable = self._seen, self.prefixes, mon.DISABLE

        def on_line(code, line):
            f = code.co_filename
            if f.startswith(prefixes):
                seen.setdefault(f, set()).add(line)
            return disable

        mon.register_callback(tool, mon.events.LINE, on_line)
        mon.set_events(tool, mon.events.LINE)
        mon.restart_events()  # lines disabled by an earlier task report again

    def _stop_monitoring(self) -> dict[str, set[int]]:
        mon = sys.monitoring
        mon.set_events(mon.COVERAGE_ID, 0)
        mon.register_callback(mon.COVERAGE_ID, mon.events.LINE, None)
        mon.free_tool_id(mon.COVERAGE_ID)
        return self._seen


def coverage_mode(opts):
    """A run's ExecOptions (runners/pipeline.py) in coverage mode: tasks record their lines, and the
    workers start with every cache off. Raises CoverageUnavailable where nothing can record lines."""
    backend_name()
    return dataclasses.replace(opts, coverage=True, env={**opts.env, **CACHE_ENV})


def caches_off() -> None:
    """Inductor's, AOTAutograd's and autotuning's caches off in this process (also set by CACHE_ENV)."""
    import torch._functorch.config as fconfig
    import torch._inductor.config as iconfig
    iconfig.force_disable_caches = True
    iconfig.fx_graph_cache = False
    iconfig.autotune_local_cache = False
    fconfig.enable_autograd_cache = False


def measured(task: Task, fn: Callable[[Task], Result]) -> Result:
    """Run `fn(task)` (a worker task) recording the compiler lines it reaches; the lines go to the
    file `task.coverage` names, and the result gets `compiler_lines`: {"file", "lines", "backend"}."""
    caches_off()
    rec = LineRecorder()
    rec.start()
    try:
        res = fn(task)
    finally:
        lines = rec.stop()
    path = Path(str(task.coverage))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": task.id, "backend": rec.backend, "lines": lines}))
    info = {"file": str(path), "lines": sum(len(v) for v in lines.values()), "backend": rec.backend}
    return res.with_(compiler_lines=info)


def read_lines(path: str | Path) -> dict[str, list[int]]:
    """A task's lines file, as `measured` wrote it ({} when missing or unreadable)."""
    try:
        return json.loads(Path(path).read_text()).get("lines") or {}
    except (OSError, ValueError):
        return {}

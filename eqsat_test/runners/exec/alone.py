"""Worker side of a warm confirmation: a finding's repro.py run alone in a warm worker, with fresh compile state.

Fresh compile state: Dynamo reset, Inductor's in-memory caches cleared, its FX graph and AOTAutograd caches off
for the run (so Dynamo, AOTAutograd and Inductor trace, lower and generate the program again; a kernel whose
generated source is byte for byte one compiled before is still loaded from the on-disk kernel cache, as its
binary would be the same), and what the repro may set (Inductor and Dynamo config, environment variables,
default dtype, grad mode, deterministic algorithms, threads) put back after it, so the next task in this
worker starts as it would have. The script runs as `python repro.py` would (`__name__ == "__main__"`, its own
folder as working directory); its exit code and output come back in the result's `repro`. A repro that
kills the process, or hangs, is the pool's to report (a process crash or a timeout of the task).
"""
from __future__ import annotations

import contextlib
import io
import os
import runpy
import time
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path

import torch

from eqsat_test.runners.records import Result, ResultStatus, Task

OUTPUT_MAX_CHARS = 8000


@contextlib.contextmanager
def fresh_compile_state() -> Iterator[None]:
    """Dynamo reset and Inductor's caches cleared and off inside; the process's global state restored after."""
    import torch._dynamo.config as dynamo_config
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    from torch._inductor.utils import clear_caches

    configs = (inductor_config, dynamo_config, functorch_config)
    saved = [c.save_config() for c in configs]
    state = (dict(os.environ), os.getcwd(), torch.get_default_dtype(), torch.is_grad_enabled(),
             torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
    torch._dynamo.reset()
    clear_caches()
    inductor_config.fx_graph_cache = False
    inductor_config.autotune_local_cache = False
    functorch_config.enable_autograd_cache = False
    try:
        yield
    finally:
        torch._dynamo.reset()
        clear_caches()
        with warnings.catch_warnings():  # (loading a config sets its deprecated keys too, each with a warning)
            warnings.simplefilter("ignore", FutureWarning)
            for c, blob in zip(configs, saved):
                c.load_config(blob)
        os.environ.clear()
        os.environ.update(state[0])
        os.chdir(state[1])
        torch.set_default_dtype(state[2])
        torch.set_grad_enabled(state[3])
        torch.use_deterministic_algorithms(state[4])
        torch.set_num_threads(state[5])


def exit_code(e: SystemExit) -> int:
    """The exit status `python script.py` has for a SystemExit: None 0, an int itself, anything else 1."""
    if e.code is None:
        return 0
    return e.code if isinstance(e.code, int) else 1


def run_repro_alone(folder: Path) -> tuple[int, str]:
    """folder/repro.py run in this process as `python repro.py` runs it: (exit code, stdout and stderr)."""
    buf = io.StringIO()
    rc = 0
    with fresh_compile_state(), contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        os.chdir(folder)
        try:
            runpy.run_path(str(folder / "repro.py"), run_name="__main__")
        except SystemExit as e:
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=buf)  # as the interpreter prints a SystemExit's message
            rc = exit_code(e)
        except Exception:  # an exception out of the script: the interpreter's traceback and status 1
            traceback.print_exc(file=buf)
            rc = 1
    return rc, buf.getvalue()


def run_repro_task(task: Task) -> Result:
    """A task of kind repro (its `folder`: a finding folder) -> a Result whose `repro` is {"rc", "output",
    "seconds"} (status ok: the script ran to its end, whatever it found)."""
    t0 = time.perf_counter()
    rc, out = run_repro_alone(Path(str(task.folder)))
    return Result(task=task.id, variant=task.variant, backend=task.backend,
                  device=task.device or "cpu", status=ResultStatus.OK,
                  repro={"rc": rc, "output": out[-OUTPUT_MAX_CHARS:], "seconds": round(time.perf_counter() - t0, 3)})

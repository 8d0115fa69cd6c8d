"""The worker wire protocol and the helpers every execution module shares (loading, errors, devices).

A worker reads one JSON task per line on stdin (a Task's dict: `task_line`, `read_task`) and writes one JSON line
per result (a Result's dict: `send_result`, read back by the pool with Result.from_dict) or phase on the real
stdout, each prefixed with RESULT_TAG so stray prints from torch are never mistaken for results. Imports nothing
of the project but its records: every execution module may import this one.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import platform
import re
import time
import traceback
from typing import Any, Callable, TextIO

from eqsat_test.runners.records import Result, Task

RESULT_TAG = "@@EQSAT-RESULT@@ "
PARENT_ENV = "EQSAT_WORKER_PARENT"  # the pid of the process a worker serves: the worker ends without it

_channel: TextIO | None = None  # the real stdout of a worker process (set by open_channel)


def cpu_cores() -> int:
    """Cores this process may use (its CPU affinity, where the OS tells: a container's or `taskset`'s share)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def open_channel(stream: TextIO) -> None:
    """Make `stream` this process's result channel (a worker does this once, at start)."""
    global _channel
    _channel = stream


def send(message: dict) -> None:
    """One message on the result channel (nothing outside a worker process)."""
    if _channel is not None:
        print(RESULT_TAG + json.dumps(message, default=str), file=_channel, flush=True)


def send_result(res: Result) -> None:
    """A task's result on the result channel: its dict."""
    send(res.to_dict())


def task_line(task: Task) -> str:
    """A task as the line the pool writes to a worker's stdin."""
    return json.dumps(task.to_dict()) + "\n"


def read_task(line: str) -> Task:
    """The task a line of a worker's stdin holds (`task_line`'s), decoded once."""
    return Task.from_dict(json.loads(line))


def phase(name: str) -> None:
    """Tell the pool what runs now: a worker death in "eager" is no compiler bug (runners/exec/pool.py)."""
    send({"phase": name})


def load_module(path: str):
    """Import a variant (or model) file by path under a name of its own."""
    name = "eqsat_variant_" + str(abs(hash(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python module file: {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def program_entry(mod, train: bool = False) -> tuple[Callable[..., Any], Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """(what torch.compile is given for a variant module, wrap): wrap(compiled) is called like the module's
    `forward`. A program that writes its inputs (the module's WRITES) is compiled as it writes them: its `program`,
    called through `written_call` on copies of those inputs, so that what the compiler does with the writes is
    judged (outputs, then the written inputs' final values). Any other program, and any in training mode (its
    step differentiates `forward`, which writes nothing), is compiled as its `forward`."""
    if getattr(mod, "WRITES", None) and not train and callable(getattr(mod, "program", None)):
        return mod.program, lambda compiled: (lambda *xs: mod.written_call(compiled, xs))
    return mod.forward, lambda compiled: compiled


def written_leaf(leaf: str | None, n_leaves: int, writes) -> str | None:
    """The name of the written input a failing leaf path ("[k]..." of a program's result) is, or None for an output:
    a program that writes its inputs returns their final values last (`written_call`), one top-level item each."""
    if not leaf or not writes or not leaf.startswith("["):
        return None
    try:
        k = int(leaf[1:leaf.index("]")])
    except ValueError:
        return None
    first = n_leaves - len(writes)
    return str(writes[k - first]) if first <= k < n_leaves else None


def on_cpu(mod) -> Callable[..., Any]:
    """mod.forward run eagerly on the CPU, its own constants (mod.DEVICE) there too, on CPU copies of
    the arguments: the program as the CPU computes it, for a program that runs on a GPU."""
    def run(*args):
        import torch
        prev = getattr(mod, "DEVICE", None)
        mod.DEVICE = torch.device("cpu")
        try:
            with torch.no_grad():
                return mod.forward(*to_cpu(list(args)))
        finally:
            mod.DEVICE = prev
    return run


def cpu_error(mod, inputs) -> str | None:
    """What the program raises run eagerly on the CPU (its own constants there too), or None. On a GPU, a
    value the program refuses (an index out of range, a binary cross-entropy target outside [0, 1]) is a
    device-side assert that ends the process's CUDA context: inputs that may hold one are tried here first."""
    try:
        reseed()
        on_cpu(mod)(*inputs)
    except Exception as e:  # noqa: BLE001 - whatever the program raises
        return first_line(e)
    return None


def first_line(e: BaseException) -> str:
    """An exception in one line: its type and its message's first line."""
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:200] if msg else ''}"


def error_info(e: BaseException) -> dict:
    """An exception as JSON: type, module, first message line, traceback, stack and cause chain (for triage)."""
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    msg = str(e).strip().splitlines()
    chain: list = []
    c, seen = e.__cause__ or e.__context__, set()
    while c is not None and id(c) not in seen and len(chain) < 8:  # for triage (runners/findings/triage.py)
        seen.add(id(c))
        first = str(c).strip().splitlines()
        chain.append({"type": type(c).__name__, "module": type(c).__module__, "message": first[0][:300] if first else ""})
        c = c.__cause__ or c.__context__
    return {"type": type(e).__name__, "module": type(e).__module__,
            "message": msg[0][:500] if msg else "", "traceback": "".join(tb)[-6000:],
            "stack": "".join(traceback.format_tb(e.__traceback__))[-4000:], "chain": chain}


def compile_options(backend: str) -> tuple[Any, dict]:
    """Backend spec -> (torch.compile backend, options). Specs: inductor, eager, aot_eager,
    cudagraphs, inductor-max-autotune, inductor-reduce-overhead, inductor-dynamic,
    inductor+<config>=<value>,... for Inductor config overrides, and FILE.py:FN or module:FN
    for any torch.compile backend callable."""
    opts: dict = {}
    config: dict = {}
    if is_custom_backend(backend):
        return load_backend(backend), opts
    if "+" in backend:
        backend, cfg = backend.split("+", 1)
        for item in cfg.split(","):
            k, _, v = item.partition("=")
            try:
                config[k] = json.loads(v) if v else True
            except json.JSONDecodeError:  # an unquoted string, as shells leave `key="text"`
                config[k] = v
    if backend == "inductor-max-autotune":
        backend, opts["mode"] = "inductor", "max-autotune"
    elif backend == "inductor-reduce-overhead":
        backend, opts["mode"] = "inductor", "reduce-overhead"
    elif backend == "inductor-dynamic":
        backend, opts["dynamic"] = "inductor", True
    if config:
        opts["options"] = config
    return backend, opts


def call_compiled(fn, args, opts: dict) -> Any:
    """One run of a compiled program as its mode needs. On a GPU, whatever put CUDA graphs in (a mode,
    `triton.cudagraphs`, the cudagraphs backend), a step begins before each call and the outputs are
    cloned, so that the next call does not overwrite them before they are judged; reduce-overhead
    runs twice (the graph replays from the second call). The caller holds no_grad and the seed."""
    import torch
    on_gpu = any(isinstance(a, torch.Tensor) and a.is_cuda for a in torch.utils._pytree.tree_leaves(args))
    for _ in range(2 if opts.get("mode") == "reduce-overhead" else 1):
        if on_gpu:
            torch.compiler.cudagraph_mark_step_begin()
        out = fn(*args)
    if on_gpu:
        out = torch.utils._pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, out)
    return out


def is_custom_backend(spec: str) -> bool:
    """Whether a backend spec names a callable (`FILE.py:FN` or `module:FN`), not a registered backend."""
    return ":" in spec and "+" not in spec


def absolute_backend(spec: str, base=None) -> str:
    """`rel/file.py:FN` -> `/abs/rel/file.py:FN`, resolved against `base` (else the working folder) where
    the file is there: workers, repro scripts and campaign jobs run in other folders. Other specs as given."""
    if not is_custom_backend(spec):
        return spec
    import os
    where, _, fn = spec.rpartition(":")
    if not where.endswith(".py") or os.path.isabs(where):
        return spec
    for folder in ([str(base)] if base is not None else []) + [os.getcwd()]:
        path = os.path.join(folder, where)
        if os.path.isfile(path):
            return f"{os.path.abspath(path)}:{fn}"
    return spec


def load_backend(spec: str):
    """`FILE.py:FN` or `module:FN` -> the backend callable it names (raises ValueError if none)."""
    where, _, fn = spec.rpartition(":")
    if where.endswith(".py"):
        mod = load_module(where)
    else:
        mod = importlib.import_module(where)
    obj = getattr(mod, fn, None)
    if not callable(obj):
        raise ValueError(f"backend {spec!r}: {where} has no callable {fn!r}")
    return obj


@functools.cache
def no_accelerator() -> bool:
    """Whether this process can use no GPU at all (CUDA, MPS, XPU): decided once."""
    import torch
    mps = getattr(torch.backends, "mps", None)
    xpu = getattr(torch, "xpu", None)
    return not (torch.cuda.is_available() or (mps is not None and mps.is_available())
                or (xpu is not None and xpu.is_available()))


def reseed(seed: int = 0) -> None:
    """`torch.manual_seed(seed)`, without its cost where no GPU can be used: torch.manual_seed also queues the seed
    for CUDA's lazy start with a stack trace captured on every call (about a millisecond at a judge's depth, and a
    run reseeds thousands of times); with no GPU, the CPU generator is the only one a program can draw from."""
    import torch
    if no_accelerator():
        torch.default_generator.manual_seed(seed)
    else:
        torch.manual_seed(seed)


def to_cpu(x: Any) -> Any:
    """Tensors (nested in lists, tuples, dicts) detached on the CPU; namedtuples become plain
    tuples, so saved outputs load with torch.load(weights_only=True)."""
    import torch
    if isinstance(x, torch.Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: to_cpu(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(to_cpu(v) for v in x)
    if isinstance(x, list):
        return [to_cpu(v) for v in x]
    return x


def to_device(x: Any, device) -> Any:
    """Tensors (nested in lists, tuples, dicts) moved to `device`, values and requires_grad kept."""
    import torch
    if isinstance(x, torch.Tensor):
        y = x.detach().to(device)
        if x.requires_grad and (y.is_floating_point() or y.is_complex()):
            y.requires_grad_(True)
        return y
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(to_device(v, device) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    return x


def load_tensors(path) -> Any:
    """Read back what an eqsat-test worker saved (tensors in lists/tuples/dicts) without running pickled code."""
    import torch
    return torch.load(path, weights_only=True, map_location="cpu")


def past(deadline: float | None) -> bool:
    """Whether a deadline (time.monotonic()) has passed; None: no deadline."""
    return deadline is not None and time.monotonic() > deadline


_ENV_CACHE: dict = {}


def versions() -> dict:
    """The torch, Python, platform and Triton versions of this process (a finding's and a perf note's meta.json)."""
    if not _ENV_CACHE:
        import torch
        v: dict[str, str | None] = {"torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform()}
        try:
            import triton  # noqa: F401
            v["triton"] = triton.__version__
        except Exception:
            v["triton"] = None
        _ENV_CACHE.update(v)
    return dict(_ENV_CACHE)


def exit_with_parent(every: float = 1.0) -> None:
    """End this process (a worker, the prover) when the process it serves is gone (killed, even with SIGKILL):
    it runs in a session of its own, so no signal reaches it, and a closed stdin is read only between tasks;
    a long task (a 6M-element output judged on every input set) would run on for minutes."""
    import threading
    parent = int(os.environ.get(PARENT_ENV) or os.getppid())  # (the parent may be gone before this runs)

    def watch() -> None:
        while True:
            time.sleep(every)
            if os.getppid() != parent:
                os._exit(3)
    threading.Thread(target=watch, daemon=True, name="exit-with-parent").start()


# `eqsat-test run A.py B.py ...` (runners/cli/many.py) says on stderr where each model starts and how it ended, in
# these two lines: a campaign job of several programs (runners/campaign/batch.py) reads them to keep each program's
# verdicts, log and time limit apart.
MODEL_LINE = re.compile(r"^eqsat-test: model (\d+) of (\d+): (?:exit (-?\d+)$|.* -> )", re.M)


def model_start_line(k: int, n: int, model: object, out: object) -> str:
    """The line (without the `eqsat-test: ` prefix) saying that model k of n starts, writing to `out`."""
    return f"model {k} of {n}: {model} -> {out}"


def model_end_line(k: int, n: int, code: int) -> str:
    """The line (without the `eqsat-test: ` prefix) saying that model k of n ended with exit code `code`."""
    return f"model {k} of {n}: exit {int(code)}"

"""Batched execution: K variants compiled as one graph, every suspicious one confirmed alone.

Part of a variant's cost on a warm worker is fixed per `torch.compile` call (Dynamo set-up, AOT,
Inductor scheduling, loading; ~1 s on CPU), the rest is per kernel (CPU Inductor runs one C++
compile per kernel, ~0.3 s each, and rewritten variants rarely share kernels). A batch task
compiles one function that calls K variants' `forward`s, each on its own copy of the inputs
(separate graph inputs, so Inductor cannot merge the variants' computations), and judges each
variant's slice of the outputs against that variant's own eager output, as a single task does
(the same `judge_against`, runners/oracle/reference.py). Small graphs gain (few kernels each); big ones do not, so
`--batch auto` batches by graph size (`auto_batch_size`).

A batch clears variants, and convicts none of its own. A variant whose slice is not a clean match on every
input set, or every variant of a batch that crashed, timed out or errored, is re-run as the normal
single-variant task, and that task's result is the verdict (so findings are those of the plain
mode; a mismatch seen only in the batch is counted as `unconfirmed`, not reported). One exception, the bug
path: a variant whose slice fails exactly where and how its seed's own run failed (`fails_as_its_seed`: every
input set's verdict kind the seed's, one failing) keeps its batch verdict, because the report folds it into the
seed's finding anyway (runners/findings/rootcause.py) and the seed's finding is confirmed alone; when every
variant inherits the seed's bug, this spares one compile per variant (`failed_as_seed`).

Worker side: `run_batch_task` (called by runners/worker.py for tasks of kind "batch").
Pool side: `run_batched`, a drop-in for `runners.execute.run_tasks`.
"""
from __future__ import annotations

import queue
import sys
import threading
import time
from pathlib import Path
from typing import Callable, TypeGuard

import torch

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.exec.pool import release, run_slots, worker
from eqsat_test.runners.oracle.inputs import InputSet, input_sets
from eqsat_test.runners.oracle.judge import MATCH
from eqsat_test.runners.oracle.reference import eager_reference, judge_against
from eqsat_test.runners.protocol import (
    call_compiled,
    compile_options,
    cpu_error,
    error_info,
    load_module,
    on_cpu,
    reseed,
    to_cpu,
    to_device,
)
from eqsat_test.runners.records import InputSetVerdict, Result, ResultStatus, Task, TaskKind

# ----------------------------------------------------------------------------------------------
# worker side


def _eager(sub: Task, device) -> tuple:
    """Load one variant and compute its eager references, as runners.worker.run_task does;
    raises when anything goes wrong (the variant then runs as a single task, which reports it)."""
    t0 = time.perf_counter()
    mod = load_module(sub.file)
    mod.DEVICE = device
    sys.modules[mod.__name__] = mod  # Dynamo looks up the globals of inlined functions by module name
    base = to_device(mod.get_inputs(), torch.device("cpu"))
    sets = input_sets(base, is_param=sub.is_param, seed=sub.seed, kinds=tuple(sub.input_kinds))
    host_sets = sets
    if device.type != "cpu":
        sets = [InputSet(s.name, tuple(to_device(list(s.inputs), device))) for s in sets]
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    refs = []
    for s, on_host in zip(sets, host_sets):
        # a set the program refuses goes to the single task, which sets it aside; on a GPU it is found on the
        # CPU, before it can be a device-side assert that ends this worker's CUDA context (protocol.cpu_error)
        refused = cpu_error(mod, on_host.inputs) if device.type == "cuda" and s.name != "given" else None
        if refused is not None:
            raise RuntimeError(f"input set {s.name} refused: {refused}")
        r = eager_reference(mod.forward, mod.index_sources, s, cpu_forward=on_cpu(mod))
        refs.append(r)
        ref = r.ref
        if sub.save_eager:  # the unsound-rewrite check reads these (runners/pipeline.py)
            out = Path(sub.save_eager) / f"{s.name}.pt"
            out.parent.mkdir(parents=True, exist_ok=True)
            torch.save(to_cpu(ref), out)
    return mod, refs, {"load": t_load, "eager": time.perf_counter() - t0}


def _copy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    return x


def run_batch_task(task: Task) -> Result:
    """Run K variants' eager references, one compile of all K, and judge each slice.

    Returns the batch's Result: its `batch_results` (per variant its result, marked `suspect` in its `batch` where a
    set did not match, or None where the variant needs its single task) and its stats (`batch`); never raises for a
    variant's failure (that variant gets None)."""
    subs = task.batch
    device = torch.device(task.device)
    results: list[Result | None] = [None] * len(subs)
    info: dict = {"size": len(subs), "id": task.id}

    def answer() -> Result:
        return Result(task=task.id, variant=task.variant, backend=task.backend,
                      device=device.type, status=ResultStatus.OK, batch=info, batch_results=tuple(results))

    live = []  # (position, sub, mod, refs, timings)
    for i, sub in enumerate(subs):
        try:
            got = _eager(sub, device)
        except Exception as e:  # noqa: BLE001 - the single task reports it properly
            info.setdefault("eager_errors", []).append({"variant": sub.variant, "error": error_info(e)["message"]})
            continue
        live.append((i, sub, *got))
    if not live:
        return answer()
    fwds = [mod.forward for _, _, mod, _, _ in live]
    counts = [len(refs[0][0].inputs) for _, _, _, refs, _ in live]

    def batched(*flat):
        outs, pos = [], 0
        for f, n in zip(fwds, counts):
            outs.append(f(*flat[pos:pos + n]))
            pos += n
        return tuple(outs)

    backend, opts = compile_options(task.backend)
    torch._dynamo.reset()
    compiled = torch.compile(batched, backend=backend, **opts)
    n_sets = len(live[0][3])
    verdicts: list[list[InputSetVerdict]] = [[] for _ in live]
    times = {"compile": 0.0, "run": 0.0}
    for j in range(n_sets):
        flat = [_copy(x) for _, _, _, refs, _ in live for x in refs[j][0].inputs]
        t0 = time.perf_counter()
        try:
            reseed()
            with torch.no_grad():
                outs = call_compiled(compiled, flat, opts)
            if device.type == "cuda":
                torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - every variant of the batch goes back to a single task
            info["error"] = error_info(e)["message"]
            info["error_type"] = error_info(e)["type"]
            return answer()
        times["compile" if j == 0 else "run"] += time.perf_counter() - t0
        for k, (_, _, _, refs, _) in enumerate(live):
            s = refs[j].set
            v = judge_against(refs[j], outs[k])
            verdicts[k].append(InputSetVerdict(name=s.name, **v.to_dict()))
    share = len(live)
    info.update({k: round(v, 4) for k, v in times.items()})
    for k, (i, sub, _, _, t) in enumerate(live):
        clean = all(e.kind == MATCH for e in verdicts[k])
        if not clean:
            info.setdefault("suspects", []).append(sub.variant)
        results[i] = Result(task=sub.id, variant=sub.variant, backend=sub.backend,
                            device=device.type, status=ResultStatus.OK, input_sets=tuple(verdicts[k]),
                            timings={**t, "compile": times["compile"] / share, "run": times["run"] / share},
                            batch={"id": task.id, "size": share, **({} if clean else {"suspect": True})})
    return answer()


# ----------------------------------------------------------------------------------------------
# pool side


def batch_group(manifest: Manifest) -> Callable[[Task], object | None]:
    """The batching key of a task of `manifest`'s bundle: (graph, backend, device), or None for
    tasks that always run alone (seeds, graphs with in-place ops or writes to their inputs, whose programs are
    compiled as they write, sweeps, timing and cross-device tasks, which need per-variant outputs or compiles)."""
    def key(t: Task):
        v = manifest.find_variant(t.variant)
        if v is None or v.seed:
            return None
        g = manifest.find_graph(v.graph)
        if g is not None and (g.mutating or g.writes or g.effects):
            return None
        if t.kind != TaskKind.RUN or t.perf or t.save_outputs:
            return None
        return (v.graph, t.backend, t.device)

    return key


def seed_tasks(manifest: Manifest, tasks: list[Task]) -> Callable[[Task], int | None]:
    """The index in `tasks` of the task that runs a batchable task's seed as that task runs its variant: the one
    plain run (no timing, no saved outputs) of the seed of its graph on the same backend and device; None where
    there is not exactly one."""
    plain: dict[tuple, list[int]] = {}
    for i, t in enumerate(tasks):
        v = manifest.find_variant(t.variant)
        if v is not None and v.seed and t.kind == TaskKind.RUN and not t.perf and not t.save_outputs:
            plain.setdefault((v.graph, t.backend, t.device), []).append(i)

    def index(t: Task) -> int | None:
        v = manifest.find_variant(t.variant)
        found = plain.get((v.graph, t.backend, t.device), []) if v is not None else []
        return found[0] if len(found) == 1 else None

    return index


def _cleared(sub: Result | None) -> TypeGuard[Result]:
    """Whether a variant's entry of a batch's `batch_results` is cleared: a result not marked suspect (the other
    entries: None, the variant needs its single task; or suspect, a set did not match)."""
    return sub is not None and not (sub.batch or {}).get("suspect")


def fails_as_its_seed(r: Result, seed: Result) -> bool:
    """A variant's verdicts fail exactly where and how its seed's own run failed: both ran, every input set's
    (ok, kind) is the seed's on the set of that name, and at least one set failed."""
    if r.status != ResultStatus.OK or seed.status != ResultStatus.OK:
        return False
    mine = {s.name: (s.ok, s.kind) for s in r.input_sets}
    return mine == {s.name: (s.ok, s.kind) for s in seed.input_sets} and any(not ok for ok, _ in mine.values())


def auto_batch_size(ops: int) -> int:
    """Variants per batch for a graph of `ops` ops (`--batch auto`). A batch saves the fixed
    part of a compile (~1 s on CPU Inductor: Dynamo, AOT, scheduling, loading); the C++
    compile of each kernel is not shared. Measured per variant on 2 cores: 19-op elementwise
    graph 1.1 s alone, 0.4 s in 8s; 8-op MLP 1.9 s, 1.1 s; 89-op block 3.4 s alone or in 4s;
    411-op stack 26 s alone, 29 s in 4s. So: batch small graphs, leave big ones alone."""
    return max(1, min(8, 96 // max(1, ops)))


def make_batches(tasks: list[Task], k, group_of: Callable[[Task], object | None]) -> tuple[list, list[int]]:
    """Group batchable tasks (group_of(task) not None) into batches of up to k (an int, or a
    function of the group) with the same group (graph, backend, device); returns
    ([(batch task, [task indices])], [single indices])."""
    size = k if callable(k) else (lambda g: k)
    groups: dict = {}
    singles: list[int] = []
    for i, t in enumerate(tasks):
        g = group_of(t)
        if g is None or size(g) <= 1:
            singles.append(i)
        else:
            groups.setdefault(g, []).append(i)
    batches: list = []
    for g, idx in groups.items():
        n = -(-len(idx) // size(g))  # as even as possible: 10 tasks, k=4 -> 4, 3, 3
        per = -(-len(idx) // n)
        for b in range(n):
            part = idx[b * per:(b + 1) * per]
            if len(part) == 1:
                singles.append(part[0])
                continue
            first = tasks[part[0]]
            batches.append((Task(id=f"batch{len(batches)}:{first.variant}+{len(part) - 1}",
                                 variant=f"batch of {len(part)}", backend=first.backend, device=first.device,
                                 kind=TaskKind.BATCH, batch=tuple(tasks[i] for i in part), group=repr(g)),
                            part))
    return batches, sorted(singles)


def run_batched(tasks: list[Task], opts, k, group_of: Callable[[Task], object | None],
                on_result: Callable[[Result], None] | None = None, log: Callable[[str], None] = lambda s: None,
                batch_timeout: float | None = None,
                seed_of: Callable[[Task], int | None] = lambda t: None) -> tuple[list[Result], dict]:
    """Like runners.execute.run_tasks (same warm workers, results in task order), with batching;
    returns (results, stats). Confirmation tasks go to the same warm workers as soon as a batch
    reports a suspect, unless the suspect fails as its seed's task (`seed_of`: its index) did: then its
    batch verdict stands (waiting for the seed's result if it is not in yet)."""
    batches, singles = make_batches(tasks, k, group_of)
    todo: queue.Queue = queue.Queue()
    # in the tasks' order (a batch where its first task is): the caller's order says what runs first
    for _, item in sorted([(min(b[1]), ("batch", b)) for b in batches] + [(i, ("single", i)) for i in singles],
                          key=lambda x: x[0]):
        todo.put(item)
    results: list[Result | None] = [None] * len(tasks)
    stats = {"k": k if not callable(k) else "auto", "batches": len(batches), "batched_tasks": sum(len(p) for _, p in batches),
             "cleared_in_batch": 0, "confirm_tasks": 0, "failed_as_seed": 0, "batch_failures": 0, "confirmed": 0,
             "unconfirmed": 0, "unbatched_tasks": 0}
    lock = threading.Lock()
    pending = [todo.qsize()]  # queued or running items; a slot may stop only when this is 0
    errors: list[BaseException] = []
    suspects: set[int] = set()
    # A group (graph, backend, device) whose batches come back mostly suspect (e.g. every variant
    # inherits one compiler bug of the seed) stops batching: each suspect costs a second compile.
    seen_in_group: dict[str, list[int]] = {}  # group -> [variants batched, suspects]
    stop_batching: set[str] = set()

    waiting: dict[int, list[tuple[int, Result | None]]] = {}  # a seed's task index -> suspects waiting for its result

    def finish(i: int, r: Result) -> None:
        results[i] = r
        if i in suspects:
            bad = r.status != ResultStatus.OK or any(
                not s.ok or s.kind != MATCH for s in r.input_sets)
            stats["confirmed" if bad else "unconfirmed"] += 1
        if on_result:
            on_result(r)
        for j, sub in waiting.pop(i, []):
            settle(j, sub, r)
            pending[0] -= 1  # (the wait's own count; a re-run counts itself)

    def settle(i: int, sub: Result | None, seed: Result | None) -> None:
        """A suspect of a batch: its batch verdict where it fails as its seed did, else a run of its own."""
        if sub is not None and seed is not None and fails_as_its_seed(sub, seed):
            stats["failed_as_seed"] += 1
            finish(i, sub.with_(batch={**(sub.batch or {}), "as_seed": True}))
            return
        suspects.add(i)
        stats["confirm_tasks"] += 1
        pending[0] += 1
        todo.put(("single", i))

    def slot(n: int) -> None:
        w = worker(n, opts, log)
        try:
            while True:
                if opts.out_of_time():
                    return
                try:
                    kind, item = todo.get(timeout=0.2)
                except queue.Empty:
                    with lock:
                        if pending[0] == 0:
                            return
                    continue
                try:
                    if kind == "batch":
                        bt, part = item
                        with lock:
                            unbatch = bt.group in stop_batching
                            if unbatch:  # run its variants alone instead
                                stats["unbatched_tasks"] += len(part)
                                pending[0] += len(part)
                                for i in part:
                                    todo.put(("single", i))
                        if not unbatch:
                            r = w.run(bt.with_(timeout_s=batch_timeout) if batch_timeout else bt)
                            got = r.batch_results or [None] * len(part)
                            with lock:
                                if r.batch_results is None or (r.batch or {}).get("error"):
                                    stats["batch_failures"] += 1
                                for i, sub in zip(part, got):
                                    if _cleared(sub):
                                        stats["cleared_in_batch"] += 1
                                        finish(i, sub)
                                        continue
                                    s = seed_of(tasks[i]) if sub is not None else None
                                    if s is not None and results[s] is None:  # the seed's verdict is not in yet
                                        waiting.setdefault(s, []).append((i, sub))
                                        pending[0] += 1
                                    else:
                                        settle(i, sub, results[s] if s is not None else None)
                                tally = seen_in_group.setdefault(bt.group, [0, 0])
                                tally[0] += len(part)
                                tally[1] += sum(1 for sub in got if not _cleared(sub))
                                if tally[1] * 2 > tally[0]:
                                    stop_batching.add(bt.group)
                    else:
                        r = w.run(tasks[item])
                        with lock:
                            finish(item, r)
                except BaseException as e:  # a worker that cannot start: stop this slot
                    errors.append(e)
                    with lock:
                        pending[0] -= 1
                        for j, sub in waiting.pop(item, []) if kind == "single" else []:  # their seed has no verdict
                            settle(j, sub, None)
                            pending[0] -= 1
                    return
                with lock:
                    pending[0] -= 1
        finally:
            release(w)

    return run_slots(slot, max(1, min(opts.jobs, len(batches) + len(singles))), results, errors), stats

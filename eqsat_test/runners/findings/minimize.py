"""Minimization: shrink a failing variant's program (drop outputs, cut it short, bypass ops) while it still fails the same way.

Works on the program IR (lowering/program.py), not on source text: generation stores each
module's `Program` beside it (`<id>.program.json`, lowering/bundle.py). The moves are pure
functions on programs (runners/findings/shrink.py), in order:

1. keep only the output that failed (multi-output programs);
2. cut: return an earlier tensor instead (everything after it dies), searched for the earliest
   cut that still fails;
3. bypass (delta debugging over ops): replace every use of an op's result by one of its tensor
   operands, or else by an input, of the same shape and dtype; dead nodes are dropped.

Shapes and dtypes come from the program's TensorMeta where generation recorded them, else from
one eager run of the lowered program here. Every candidate is re-rendered through lowering/lower.py
and lowering/emit.py into a complete standalone module (same parameters, same `get_inputs` and
inputs file) and checked in a warm worker subprocess (runners/worker.py) with the same backend,
device and input set kind: the run's own workers, handed on from execution and confirmation
(runners/exec/pool.py), so a check pays no process start, and a compile crash or a hang costs one
check only. The findings of a run are minimized at once, their candidates on one queue that every
worker serves (CheckPool). The smallest failing one is the finding's `minimized.py` and its repro.
Each finding gets at most `max_checks` checks; identical candidate programs are checked once per run. A module without a stored program (an older bundle, a hand-written module) is not
minimized (NotMinimizable, one line).
"""
from __future__ import annotations

import hashlib
import queue
import re
import shutil
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from eqsat_test.lowering.bundle import StoredProgram, program_file_name, read_program
from eqsat_test.lowering.manifest import Manifest
from eqsat_test.lowering.program import Program
from eqsat_test.runners.exec.pool import PoolOptions, release, worker
from eqsat_test.runners.findings.clusters import crash_site
from eqsat_test.runners.findings.shrink import (
    bypass,
    bypass_choices,
    cut_at,
    cut_points,
    keep_outputs,
    label,
    meta_of,
    output_items,
    value_meta,
    with_meta,
)
from eqsat_test.runners.oracle.inputs import KINDS
from eqsat_test.runners.oracle.judge import NONDETERMINISTIC
from eqsat_test.runners.protocol import past
from eqsat_test.runners.records import (
    CRASH_STATUSES,
    Finding,
    FindingKind,
    Result,
    ResultStatus,
    Task,
    as_finding,
    replaced,
)

# Finding kinds that minimization tries to preserve (a timeout would cost a timeout per check).
MINIMIZABLE_KINDS = (FindingKind.MISCOMPILE.value, FindingKind.SEED_MISCOMPILE.value, FindingKind.COMPILE_CRASH.value,
                     FindingKind.RUN_CRASH.value, FindingKind.GRAD_MISCOMPILE.value,
                     FindingKind.COMPILED_NONDETERMINISTIC.value)


def minimized_as(finding: Finding | Mapping) -> str:
    """The kind a candidate program must still fail with: an eager-bug keeps the kind the oracle judged (the
    referee decides the side again on the minimized program's repro)."""
    finding = as_finding(finding)
    kind = str(finding.kind)
    return str(finding.judged_kind or kind) if kind == FindingKind.EAGER_BUG else kind


class NotMinimizable(Exception):
    """The module has no readable stored program, or its program does not render or run eagerly here."""


def load_program(variant_file: Path, program_file: Path | None = None) -> StoredProgram:
    """The stored program of `variant_file` (by default `<stem>.program.json` beside it)."""
    pf = program_file or variant_file.with_name(program_file_name(variant_file.name))
    if not pf.is_file():
        raise NotMinimizable(f"{variant_file.name} has no stored program ({pf.name}): "
                             "made by an older eqsat-test or by hand")
    try:
        return read_program(pf)
    except ValueError as e:
        raise NotMinimizable(f"{pf.name}: {e}") from e


def program_meta(sp: StoredProgram, folder: Path) -> dict:
    """node index -> TensorMeta for the program's tensor values (one eager CPU run where needed)."""
    try:
        inputs = torch.load(folder / sp.inputs_file, weights_only=True)
        return value_meta(sp.program, sp.input_names, list(inputs))
    except Exception as e:
        raise NotMinimizable(f"eager run of the stored program failed: {type(e).__name__}: {e}") from e


# ----------------------------------------------------------------------------------------------
# checking candidates in the run's warm workers


class CheckPool:
    """The run's warm workers (runners/exec/pool.py: the ones execution and confirmation used, handed on),
    shared by every finding minimized at once: `run` puts its candidates on one queue that `opts.jobs` threads
    serve, each with its worker, so the checks of all findings run in parallel; results cached by program."""

    def __init__(self, opts: PoolOptions, log: Callable[[str], None] = lambda s: None) -> None:
        self.opts, self.log = opts, log
        self.width = max(1, opts.jobs)
        self.cache: dict[str, Result] = {}
        self.checks = 0
        self.lock = threading.Lock()
        self.todo: queue.Queue = queue.Queue()
        self.threads = [threading.Thread(target=self._serve, args=(k,), daemon=True) for k in range(self.width)]
        for th in self.threads:
            th.start()

    def _serve(self, k: int) -> None:
        w = worker(k, self.opts, self.log)
        try:
            while (item := self.todo.get()) is not None:
                t, got, done = item
                try:
                    got.append(w.run(t))  # a worker that crashes or hangs is restarted on the next task
                except Exception as e:  # a worker that cannot start
                    got.append(Result(task=t.id, variant=t.variant, backend=t.backend,
                                      device=t.device, status=ResultStatus.INTERNAL_ERROR,
                                      error={"type": type(e).__name__, "message": str(e)}))
                done.set()
        finally:
            release(w)

    def run(self, tasks: list[Task]) -> list[Result]:
        """Each task's result, in order; they run on the pool's workers, beside other findings' checks."""
        items: list[tuple[Task, list[Result], threading.Event]] = [(t, [], threading.Event()) for t in tasks]
        for it in items:
            self.todo.put(it)
        for _, _, done in items:
            done.wait()
        with self.lock:
            self.checks += len(tasks)
        return [got[0] for _, got, _ in items]

    def close(self) -> None:
        for _ in self.threads:
            self.todo.put(None)
        for th in self.threads:
            th.join()


def outcome(result: Result) -> tuple:
    """How a worker result fails: ("miscompile",), (status, error type), or ("ok",)/("other", ...)."""
    status = result.status
    if status in CRASH_STATUSES:
        return (FindingKind.RUN_CRASH.value if status == ResultStatus.PROCESS_CRASH else status,
                (result.error or {}).get("type", ""))
    if status != ResultStatus.OK:
        return ("other", status)
    sets = result.input_sets
    if any(s.kind == NONDETERMINISTIC for s in sets):
        return (NONDETERMINISTIC,)
    if any(not s.ok and s.part == "gradient" for s in sets):  # training mode: outputs agree
        return (FindingKind.GRAD_MISCOMPILE.value,)
    if any(not s.ok for s in sets):
        return (FindingKind.MISCOMPILE.value,)
    return ("ok",)


def target_outcome(finding: Finding | Mapping) -> tuple:
    finding = as_finding(finding)
    kind = minimized_as(finding)
    if kind in (FindingKind.MISCOMPILE, FindingKind.SEED_MISCOMPILE):
        return (FindingKind.MISCOMPILE.value,)
    if kind == FindingKind.GRAD_MISCOMPILE:
        return (kind,)
    if kind == FindingKind.RUN_CRASH and (finding.error or {}).get("type") == "ProcessCrash":
        return (FindingKind.RUN_CRASH.value, "ProcessCrash")
    return (kind, (finding.error or {}).get("type", ""))


@dataclass
class MinResult:
    source: str  # the smallest failing module (the original when nothing smaller failed)
    ops: list[str]  # its op names, in program order
    checks: int  # worker checks spent on this finding
    steps: list[str] = field(default_factory=list)  # accepted moves
    file: Path | None = None  # where `source` was written (None: nothing smaller found)
    failing_inputs: str | None = None  # the failing input set of the minimized program
    reason: str = ""  # why minimization stopped early or was skipped
    detail: str = ""  # the minimized program's own verdict (its repro and test_repro.py say this one)
    input_set: str | None = None  # the input set it fails on


def _kind_of_set(name: str | None) -> str | None:
    if not name:
        return None
    head = name.split("-", 1)[0]
    return head if head in KINDS else None


def minimize(variant_file: Path, finding: Finding | Mapping, task_base: Task, pool: CheckPool, work: Path, *,
             max_checks: int = 12, log: Callable[[str], None] = lambda s: None,
             program_file: Path | None = None, deadline: float | None = None) -> MinResult:
    """The smallest program derived from `variant_file`'s stored program that still fails like `finding`.

    task_base: the worker task whose fields the checks keep (backend, device, seed, input_kinds, is_param, grad).
    program_file: the stored program (default: `<stem>.program.json` beside `variant_file`).
    deadline (time.monotonic()): no check starts after it; the smallest failing program so far stands."""
    finding = as_finding(finding)
    src = variant_file.read_text()
    sp = load_program(variant_file, program_file)
    prog = sp.program
    full_ops = prog.op_labels()
    result = MinResult(source=src, ops=full_ops, checks=0)
    if minimized_as(finding) not in MINIMIZABLE_KINDS:
        result.reason = f"{finding.kind} findings are not minimized"
        return result
    prog = with_meta(prog, program_meta(sp, variant_file.parent))  # every move carries it along
    work.mkdir(parents=True, exist_ok=True)
    inputs_src = variant_file.parent / sp.inputs_file
    if inputs_src.is_file() and not (work / sp.inputs_file).exists():
        shutil.copy(inputs_src, work / sp.inputs_file)
    target = target_outcome(finding)
    kinds = list(task_base.input_kinds or ["given", "random", "special"])
    if target in ((FindingKind.MISCOMPILE.value,), (FindingKind.GRAD_MISCOMPILE.value,)) and _kind_of_set(finding.input_set) in kinds:
        kinds = [_kind_of_set(finding.input_set)]  # the same input set as the finding
    key_base = (f"{task_base.backend}|{task_base.device}|{task_base.seed}|{','.join(kinds)}"
                f"|{sp.inputs_file}|{','.join(sp.input_names)}")
    title = f"minimized by eqsat-test from {variant_file.name}: {sp.title}"
    best = prog
    best_src = src

    def render(c: Program) -> str | None:
        try:
            return sp.with_program(c).render(title=title)
        except Exception as e:  # a candidate that does not lower or render is no candidate
            log(f"minimize: skipped a candidate that does not render: {type(e).__name__}: {e}")
            return None

    def check(cands: list[Program]) -> Program | None:
        """The first candidate (in list order) that still fails like the finding, or None."""
        nonlocal best_src
        todo: list[tuple[str, Task]] = []  # (its program's key, the task that checks it)
        rendered = []
        for c in cands:
            text = render(c)
            if text is None:
                continue
            k = hashlib.sha256((key_base + "\n" + c.key()).encode()).hexdigest()[:16]
            rendered.append((c, text, k))
            if k in pool.cache or any(kt == k for kt, _ in todo) or result.checks + len(todo) >= max_checks \
                    or past(deadline):
                continue
            f = work / f"cand_{k}.py"
            f.write_text(text)
            todo.append((k, task_base.with_(id=f"minimize:{k}", variant=finding.variant, file=str(f),
                                            input_kinds=kinds, save_eager=None, save_compiled=str(work / f"out_{k}"))))
        if todo:
            runs = pool.run([t for _, t in todo])
            for (kt, _), r in zip(todo, runs):
                pool.cache[kt] = r
            result.checks += len(todo)
        for c, text, k in rendered:
            r = pool.cache.get(k)
            if r is not None and outcome(r) == target:
                best_src = text
                bad = [s for s in r.input_sets if not s.ok]
                if bad:
                    result.failing_inputs = bad[0].inputs_file
                    result.detail, result.input_set = bad[0].detail, bad[0].name
                elif r.error:  # a crash: its error line
                    err = r.error
                    result.detail = f"{err.get('type', '')}: {err.get('message', '')}".strip(": ")
                return c
        return None

    def budget() -> int:
        return 0 if past(deadline) else max_checks - result.checks

    width = pool.width
    # 1. keep only the failing output
    n_out = len(output_items(best))
    if n_out > 1 and budget() > 0:
        lm = re.match(r"\[(\d+)\]", finding.leaf or "")
        order = [int(lm.group(1))] if lm and int(lm.group(1)) < n_out else []
        order += [i for i in range(n_out) if i not in order]
        got = check([keep_outputs(best, [i]) for i in order[:width]])
        if got is not None:
            best = got
            result.steps.append("kept one output")
    # 2. cut: return an earlier tensor value instead. Search for the earliest cut that still
    # fails, `width` cut points per round (binary search for one worker). Failing is not
    # monotone in the cut point, so this is a heuristic; every accepted cut was checked.
    base = best
    cuts = cut_points(base, meta_of(base))
    lo, hi = 0, len(cuts)  # the earliest failing cut is looked for in cuts[lo:hi]
    while lo < hi and budget() > 0:
        n = max(1, min(width, hi - lo, budget()))
        picks = sorted({lo + (hi - lo) * (j + 1) // (n + 1) for j in range(n)})
        cands = [cut_at(base, cuts[p]) for p in picks]
        got = check(cands)
        if got is None:
            lo = picks[-1] + 1
            continue
        i = next(j for j, c in enumerate(cands) if c is got)
        best = got
        result.steps.append(f"cut at {label(base, cuts[picks[i]])}")
        lo = picks[i - 1] + 1 if i > 0 else lo
        hi = picks[i]
    # 3. bypass ops, ddmin-style over the ops that can be bypassed
    gran = 2
    while budget() > 0:
        choices = bypass_choices(best, meta_of(best), list(sp.input_names))
        names = [i for i in best.reachable() if i in choices]
        if not names:
            break
        gran = min(gran, len(names))
        chunks = [names[i * len(names) // gran:(i + 1) * len(names) // gran] for i in range(gran)]
        cands = []
        for c in (c for c in chunks if c):
            cand = bypass(best, {n: choices[n] for n in c})
            if cand.key() != best.key():
                cands.append((c, cand))
        got = None
        for lo_i in range(0, len(cands), width):
            if budget() <= 0:
                break
            batch = cands[lo_i:lo_i + width]
            got = check([c for _, c in batch])
            if got is not None:
                chunk = next(c for c, cand in batch if cand is got)
                result.steps.append(f"bypassed {', '.join(label(best, n) for n in chunk)}")
                best = got
                break
        if got is not None:
            gran = max(gran - 1, 2)
            continue
        if gran >= len(names):
            break
        gran = min(len(names), gran * 2)
    if best is not prog:
        result.source = best_src
        result.ops = best.op_labels()
        result.file = work / "minimized.py"
        result.file.write_text(best_src)
    log(f"minimized {finding.variant} ({finding.kind}): {len(full_ops)} -> {len(result.ops)} ops "
        f"in {result.checks} checks")
    return result


# ----------------------------------------------------------------------------------------------
# the pipeline's entry point


def minimize_clusters(findings: list[Finding], clusters: list, bundle: Path, manifest: Manifest, tasks: list[Task], opts,
                      work: Path, log: Callable[[str], None] = lambda s: None, deadline: float | None = None
                      ) -> tuple[list[Finding], list[Finding], dict[str, list[str]]]:
    """Minimize once per cluster (runners/findings/clusters.py): its smallest member that can be
    minimized (the seed first; sweep findings keep their full program, as minimize re-runs candidates
    on the model's own inputs); a crash that matches a ledger entry is left whole unless opts.minimize_known
    (the ledger's repro is its minimal program, and its crash site keys its cluster without a pattern).
    Returns the findings (in their order, the minimized ones new), the findings minimized, and
    {cluster key: minimized ops}."""
    findings = list(findings)
    queues = []
    for c in clusters:
        mine = [i for i, f in enumerate(findings) if f.cluster == c.key]
        if c.ledger and not opts.minimize_known and all(crash_site(findings[i]) is not None for i in mine):
            for i in mine:  # a known crash site: the ledger's repro is its minimal program, and its site its key
                findings[i] = findings[i].with_(
                    min_skipped=f"{c.known}: its minimal repro is the ledger's (docs/bugs/); --minimize-known shrinks it")
            continue
        members = [f for f in findings if f.cluster == c.key and minimized_as(f) in MINIMIZABLE_KINDS and not f.sweep]
        if members:
            queues.append(sorted(members, key=_smallest))
    tried = [q[0] for q in queues]
    reps = minimize_findings(tried, bundle, manifest, tasks, opts, work, log=log, deadline=deadline)
    findings = replaced(findings, tried, reps)
    # a member that has no program to shrink (NotMinimizable): the cluster's next smallest, once
    again = [q[1] for q, r in zip(queues, reps) if len(q) > 1 and r.min_ops is None and r.min_skipped
             and "budget" not in r.min_skipped and "more than" not in r.min_skipped]
    if again and not past(deadline):
        more = minimize_findings(again, bundle, manifest, tasks, opts, work, log=log, deadline=deadline)
        findings = replaced(findings, again, more)
        reps += more
    return findings, reps, {str(f.cluster): f.min_ops for f in reps if f.min_ops is not None}


def _smallest(f: Finding) -> tuple:
    """The seed first, then the fewest ops in the failing output's cone."""
    return (not (f.seed or f.kind == FindingKind.SEED_MISCOMPILE),
            len(f.cone_ops or f.ops or []), str(f.variant))


def minimize_findings(findings: list, bundle: Path, manifest: Manifest, tasks: list[Task], opts, work: Path,
                      log: Callable[[str], None] = lambda s: None, deadline: float | None = None) -> list[Finding]:
    """The findings, in their order, each minimized one new, with `min_ops`, `min_checks`, `minimized_file`
    (when a smaller program still fails), and `failing_inputs` pointed at the minimized failing input set.
    deadline (time.monotonic()): no check starts after it (a finding not reached keeps its program).

    opts: ExecOptions (jobs, timeout, env, minimize_checks, minimize_max_findings)."""
    by_task: dict[tuple, Task] = {(t.variant, t.backend, t.device): t for t in tasks}
    out = [as_finding(f) for f in findings]
    todo = [i for i, f in enumerate(out) if minimized_as(f) in MINIMIZABLE_KINDS]
    # Seeds first: their minimized programs are the likeliest to be shared by the variants' ones.
    todo.sort(key=lambda i: (not manifest.variant(out[i].variant).seed, out[i].variant))
    cap = getattr(opts, "minimize_max_findings", 16)
    pool = CheckPool(PoolOptions(jobs=max(1, opts.jobs), timeout=opts.timeout, env=opts.env), log)

    def one(k: int, i: int) -> None:
        f = out[i] = out[i].with_(min_ops=None)
        v = manifest.variant(f.variant)
        if k >= cap:
            out[i] = f.with_(min_skipped=f"more than {cap} findings")
            return
        if past(deadline):
            out[i] = f.with_(min_skipped="the minimization's time budget was spent")
            return
        t = by_task[(f.variant, f.backend, f.device)]
        base = Task(backend=t.backend, device=t.device, seed=t.seed, input_kinds=t.input_kinds, is_param=t.is_param,
                    grad=t.grad)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{f.variant}__{f.backend}__{f.device}")
        try:
            res = minimize(bundle / v.file, f, base, pool, work / safe,
                           max_checks=getattr(opts, "minimize_checks", 12), log=log,
                           program_file=bundle / v.program if v.program else None, deadline=deadline)
        except NotMinimizable as e:
            out[i] = f.with_(min_skipped=str(e))
            log(f"not minimized {f.variant}: {e}")
            return
        f = f.with_(min_ops=res.ops, min_checks=res.checks)
        if res.file is not None:
            f = f.with_(minimized_file=str(res.file), min_steps=res.steps)
            if res.detail:  # the minimized program's own verdict, which its repro shows
                f = f.with_(min_detail=res.detail, min_input_set=res.input_set)
            if res.failing_inputs:
                f = f.with_(failing_inputs=res.failing_inputs)
        out[i] = f

    try:  # the findings at once, their checks on one queue: every worker busy while any finding has candidates
        with ThreadPoolExecutor(max_workers=max(1, min(len(todo), pool.width))) as ex:
            list(ex.map(one, range(len(todo)), todo))
    finally:
        pool.close()
    return out

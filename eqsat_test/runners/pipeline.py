"""Execution half of the pipeline: run a bundle's variants eager and compiled, judge, write findings.

Needs torch, numpy, click and jinja2 only (no egglog): bundles made on one host run on another.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from eqsat_test.lowering.manifest import Manifest, ManifestError, load_manifest
from eqsat_test.runners.checks.configs import config_judge
from eqsat_test.runners.checks.line_gain import as_set, coverage_paths, line_gain
from eqsat_test.runners.checks.perf import slow_variant_findings, spread, write_slow_variant
from eqsat_test.runners.checks.sweep_coverage import sweep_coverage
from eqsat_test.runners.checks.sweep_plan import SweepConfig
from eqsat_test.runners.checks.sweeps import judge_sweep_results, make_sweep_tasks
from eqsat_test.runners.exec import prover
from eqsat_test.runners.exec.batch import auto_batch_size, batch_group, run_batched, seed_tasks
from eqsat_test.runners.exec.compiler_lines import read_lines
from eqsat_test.runners.exec.pool import PoolOptions, retire, run_tasks
from eqsat_test.runners.exec.progress import Progress
from eqsat_test.runners.findings.artifacts import ArtifactOptions
from eqsat_test.runners.findings.clusters import clustered
from eqsat_test.runners.findings.confirm import confirm_all, prove_all, unconfirmed_timeouts
from eqsat_test.runners.findings.ledger import load_ledger
from eqsat_test.runners.findings.meta import MetaContext, write_meta
from eqsat_test.runners.findings.minimize import minimize_clusters
from eqsat_test.runners.findings.notes import run_note_groups
from eqsat_test.runners.findings.rootcause import dedupe, fold_into_seeds
from eqsat_test.runners.findings.triage import annotate
from eqsat_test.runners.findings.write import collect_env, signature, write_finding
from eqsat_test.runners.judging import judge_results, summed_timings, with_cone, write_results
from eqsat_test.runners.oracle.referee import rule_on
from eqsat_test.runners.protocol import past, versions
from eqsat_test.runners.records import (
    MINIMIZE_SECONDS,
    Finding,
    InputSetVerdict,
    Result,
    ResultStatus,
    RunResults,
    Task,
    TaskKind,
    replaced,
)

if TYPE_CHECKING:  # (a guide needs egglog; execution alone does not)
    from eqsat_test.rewrite.guide import Guide


@dataclass(frozen=True)
class ExecOptions:
    """How `execute_bundle` runs a bundle. Frozen: a stage that needs other options makes new ones
    (`dataclasses.replace`)."""

    backends: tuple = ("inductor",)
    devices: tuple = ("cpu",)
    jobs: int = 1
    timeout: float = 300.0
    seed: int = 0
    input_kinds: tuple = ("given", "random", "special")
    env: dict = field(default_factory=dict)
    collect_env: bool = True
    progress: bool = True
    minimize: bool = True  # shrink each root cause's smallest finding while it still fails (runners/findings/minimize.py)
    minimize_checks: int = 12  # subprocess checks per root cause
    minimize_seconds: float = MINIMIZE_SECONDS  # wall budget of all minimization in a run
    minimize_max_findings: int = 16  # root causes beyond this many keep their full programs only
    minimize_known: bool = False  # also shrink crashes that match a ledger entry (its repro is minimal already)
    configs: dict = field(default_factory=dict)  # runners/checks/configs.py: {backend spec: config name}, siblings of backends[0]
    config_overrides: dict = field(default_factory=dict)  # {config name: Inductor overrides}
    perf: bool = False  # runners/checks/perf.py: time compiled variants; slow-variant notes
    perf_threshold: float = 3.0  # x the siblings' median compiled time
    # debug rerun, minifier, bisector (runners/findings/artifacts.py), collected by the CLI after the summary
    # (runners/cli/artifacts.py); None: not collected
    artifacts: ArtifactOptions | None = None
    sweep: SweepConfig | None = None  # dtype/size sweeps (runners/checks/sweep_plan.py); None: off; a dict is read as one
    batch: int = 1  # >1: this many variants per compile, suspects confirmed alone; 0: by graph size (runners/exec/batch.py)
    confirm: bool = True  # re-run each candidate alone from its repro.py before claiming it (runners/findings/confirm.py)
    time_budget: float | None = None  # seconds: no task starts after this; the run reports what was done
    deadline: float | None = None  # time.monotonic() the budget ends at: `started` sets it, once for a run
    # training mode: each program runs forward and backward and its gradients are judged (runners/exec/training.py);
    # its tasks run one variant per compile (no batches); the dtype/size sweeps stay forward-only
    grad: bool = False
    coverage: bool = False  # record the compiler lines each task reaches (runners/exec/compiler_lines.py); no batches
    guide: Guide | None = None  # rewrite/guide.Guide (coverage-guided extraction): more variants drawn as results come

    def __post_init__(self) -> None:
        if isinstance(self.sweep, dict):  # SweepConfig's fields, as a sweep task carries them
            object.__setattr__(self, "sweep", SweepConfig.from_dict(self.sweep))

    def started(self, t0: float) -> ExecOptions:
        """These options for a run that started at `t0` (time.monotonic()): --time-budget counts from there, and
        `deadline` is where it ends. A deadline set already stands (`run` sets it before loading the model)."""
        if self.deadline is not None or not self.time_budget:
            return self
        return dataclasses.replace(self, deadline=t0 + self.time_budget)


class BadBundle(Exception):
    """A folder that is not a usable bundle (exit code 4)."""


class RunInterrupted(KeyboardInterrupt):
    """SIGINT during execution, after OUT/results.json was written from what had
    finished, marked partial; `saved` says what is where (the CLI's "interrupted" line)."""

    def __init__(self, saved: str) -> None:
        super().__init__(saved)
        self.saved = saved


def read_manifest(bundle: Path) -> Manifest:
    try:
        return load_manifest(bundle)
    except ManifestError as e:
        raise BadBundle(str(e)) from e


def make_tasks(bundle: Path, manifest: Manifest, opts: ExecOptions, scratch: Path) -> list[Task]:
    cross_device = len(set(opts.devices)) > 1  # keep every output: the device-mismatch judge compares them
    tasks = []
    for device in opts.devices:
        for bi, backend in enumerate(opts.backends):
            for v in manifest.variants:
                tid = f"{v.id}@{backend}@{device}"
                safe = tid.replace("@", "__").replace("+", "_").replace("=", "_").replace(",", "_")
                tasks.append(Task(
                    id=tid, variant=v.id, file=str((bundle / v.file).resolve()),
                    backend=backend, device=device, seed=opts.seed,
                    input_kinds=list(opts.input_kinds), is_param=list(manifest.graph(v.graph).is_param) or None,
                    save_eager=str(scratch / "eager" / f"{v.id}__{device}") if bi == 0 else None,
                    save_compiled=str(scratch / "compiled" / safe),
                    save_outputs=cross_device, save_fp64=v.seed and bi == 0,
                    perf={"budget": 0.15} if opts.perf else None, grad=opts.grad,
                ))
    return tasks


def pool_options(opts: ExecOptions, deadline: float | None = None) -> PoolOptions:
    """The worker pool `execute_bundle` runs its tasks on (`runners.exec.pool.prestart` takes the same)."""
    return PoolOptions(jobs=opts.jobs, timeout=opts.timeout, env=opts.env, deadline=deadline)


class VerdictStream:
    """OUT/verdicts.jsonl: one JSON line per task result and per finding, appended and flushed as
    they come, so a run killed at any point (kill -9 included) keeps every finished verdict."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = path.open("a", buffering=1)
        self.t0 = time.monotonic()

    def result(self, r: Result) -> None:
        sets = [{k: getattr(s, k) for k in InputSetVerdict.JUDGEMENT} for s in r.input_sets]
        self._write({"type": "result", "task": r.task, "variant": r.variant,
                     "backend": r.backend, "device": r.device, "status": r.status.value,
                     "error": (r.error or {}).get("message"), "input_sets": sets,
                     "timings": r.timings})

    def finding(self, f: Finding) -> None:
        self._write({"type": "finding", **f.public().to_dict()})

    def _write(self, obj: dict) -> None:
        obj["seconds"] = round(time.monotonic() - self.t0, 3)  # since execution started
        self.file.write(json.dumps(obj, default=str) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def execute_bundle(bundle: str | Path, out: str | Path, opts: ExecOptions, log=lambda s: None) -> dict:
    """Execute every variant of `bundle` under every backend x device; write findings under `out`.

    The run is `STAGES`, in their order: run the tasks (verdicts streamed to OUT/verdicts.jsonl) -> judge, fold
    variant candidates into their seed's, deduplicate -> write finding folders and results.json (the verdicts,
    first) -> confirm each candidate alone from its repro.py (a warm worker, a fresh process where needed) ->
    cluster the confirmed ones into root causes (runners/findings/clusters.py) and minimize once per cluster ->
    prove each root cause's final repro.py once in a fresh process (runners/findings/confirm.py) -> the slow
    variants (--perf) -> results.json again, final: the root causes and the notes' groups first. The findings'
    debug artifacts are not collected here: the CLI collects them after the summary when asked
    (runners/cli/artifacts.py).

    Interrupted (SIGINT), it writes results.json from what had finished, marked partial, and
    raises RunInterrupted saying so, and in which stage."""
    bundle, out = Path(bundle), Path(out)
    manifest = read_manifest(bundle)
    so_far = SoFar(stage=STAGES[0].doing)
    try:
        return _execute(bundle, out, manifest, opts, log, so_far)
    except RunInterrupted:
        raise
    except KeyboardInterrupt:
        raise RunInterrupted(save_partial(out, _grown(manifest, opts), opts, so_far)) from None
    finally:
        retire()  # the warm workers the stages handed on (runners/exec/pool.py)


@dataclass
class SoFar:
    """What an interruption keeps (`save_partial`): the stage running, the tasks made, the results as they came
    (worker threads append to it), and whether the verdicts' results.json was written."""

    stage: str = ""
    tasks: list[Task] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    written: bool = False


def save_partial(out: Path, manifest: Manifest, opts: ExecOptions, so_far: SoFar) -> str:
    """After an interruption: OUT/results.json from the tasks that finished, marked partial (their
    verdicts judged, candidates unconfirmed, no finding folders), or the verdicts' results.json
    marked partial when it was written already. Returns the line saying what was saved where."""
    path, stage = out / "results.json", so_far.stage
    if so_far.written and path.is_file():
        done = RunResults.read(out)
        report = {**done.report, "partial": True, "stats": {**done.report.get("stats", {}), "interrupted": {"stage": stage}}}
        dataclasses.replace(done, report=report).write(out)
        return (f"interrupted while {stage}: every verdict is in {path} (marked partial: confirmation, minimizing "
                f"and proofs not finished), as they came in {out / 'verdicts.jsonl'}")
    results = list(so_far.results)  # (a copy: worker threads may still add to it)
    plain = [r for r in results if not r.is_sweep]
    try:
        findings, notes = judge_results(manifest, plain, out / "scratch", first_backend=opts.backends[0])
        why = None
    except Exception as e:  # noqa: BLE001 - the raw verdicts are saved whatever judging them raises
        findings, notes, why = [], [], f"{type(e).__name__}: {e}"
    findings = [f.with_(unconfirmed=True) for f in findings]
    stats = {"tasks": len(so_far.tasks), "tasks_done": len(results), "tasks_not_started": None,
             "interrupted": {"stage": stage, "judging_error": why}, "backends": list(opts.backends),
             "devices": list(opts.devices), "input_kinds": list(opts.input_kinds)}
    write_results(out, manifest, results, findings, notes, stats, partial=True)
    return (f"interrupted while {stage}: {len(results)} of {len(so_far.tasks)} tasks had finished; their verdicts "
            f"({len(findings)} unconfirmed candidate(s)) are in {path} (marked partial), as they came in "
            f"{out / 'verdicts.jsonl'}; run again for the rest")


@dataclass(frozen=True)
class RunContext:
    """What every stage of one run reads and none changes."""

    bundle: Path
    out: Path
    opts: ExecOptions  # with the budget's end set (ExecOptions.started)
    sweep: SweepConfig | None  # opts.sweep, its time cap cut to the budget's end: what the sweep tasks run with
    log: Callable[[str], None]
    stream: VerdictStream
    so_far: SoFar  # what an interruption keeps
    started: float  # time.perf_counter() at the run's start

    @property
    def scratch(self) -> Path:
        return self.out / "scratch"


@dataclass(frozen=True)
class RunState:
    """What one stage hands the next: the results, the candidates and notes as far as the run has judged them,
    and each stage's figures for results.json's stats. A stage returns a new one (`dataclasses.replace`)."""

    manifest: Manifest  # with the variants guided extraction drew, once the tasks ran
    tasks: list[Task] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)  # the program tasks'
    sweep_results: list[Result] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # the candidates: judged, written, then the bugs among them
    confirmed: list[Finding] = field(default_factory=list)  # the findings that confirmation did not refute
    notes: list[Finding] = field(default_factory=list)
    clusters: list = field(default_factory=list)  # the root causes (runners/findings/clusters.py)
    pattern_of: dict | None = None  # {cluster key: the minimized ops}, once minimized
    env_text: str = ""  # the environment the finding folders hold (findings/write.collect_env)
    ledger: list = field(default_factory=list)  # the known bugs (findings/ledger.py)
    stats: dict = field(default_factory=dict)  # results.json's stats: what the verdicts' stages counted
    confirm: dict | None = None  # the confirmations' and the proofs' stats (findings/confirm.py)
    minimize: dict = field(default_factory=lambda: {"checks": 0})
    perf: dict | None = None  # --perf: the slow variants' stats (checks/perf.py)
    stages: dict = field(default_factory=dict)  # {stage name: its wall seconds and counts}: `run_stages` keeps it
    report: dict | None = None  # the final results.json's report, once written


@dataclass(frozen=True)
class Stage:
    name: str  # its key in stats["stages"]
    doing: str  # what an interrupted run says it was doing ("interrupted while ...")
    run: Callable[[RunContext, RunState], RunState]


def run_stages(stages: Sequence[Stage], ctx: RunContext, state: RunState) -> RunState:
    """Each stage in its order, on what the one before handed on. Here alone: the stage running is the one an
    interruption names, and each stage's wall seconds, and the results, candidates and notes it left, are
    recorded under its name (results.json's stats.stages, every stage's but the last, which writes it)."""
    for stage in stages:
        ctx.so_far.stage = stage.doing
        t0 = time.perf_counter()
        state = stage.run(ctx, state)
        record = {"seconds": round(time.perf_counter() - t0, 3), "results": len(state.results) + len(state.sweep_results),
                  "findings": len(state.findings), "notes": len(state.notes)}
        state = dataclasses.replace(state, stages={**state.stages, stage.name: record})
    return state


def _execute(bundle: Path, out: Path, manifest: Manifest, opts: ExecOptions, log, so_far: SoFar) -> dict:
    started = time.perf_counter()
    (out / "scratch").mkdir(parents=True, exist_ok=True)
    opts = opts.started(time.monotonic())
    ctx = RunContext(bundle=bundle, out=out, opts=opts, sweep=_budgeted(opts.sweep, opts.deadline), log=log,
                     stream=VerdictStream(out / "verdicts.jsonl"), so_far=so_far, started=started)
    state = run_stages(STAGES, ctx, RunState(manifest=manifest))
    assert state.report is not None  # (the last stage writes it)
    return state.report


def _budgeted(sweep: SweepConfig | None, deadline: float | None) -> SweepConfig | None:
    """A sweep task stops its points within the budget too."""
    if sweep is None or deadline is None:
        return sweep
    return dataclasses.replace(sweep, seconds=max(1.0, min(float(sweep.seconds or 0), deadline - time.monotonic())))


def _execute_tasks(ctx: RunContext, state: RunState) -> RunState:
    """Every task on the worker pool, its verdict streamed as it comes; the variants guided extraction draws run too."""
    bundle, opts, sweep, scratch, manifest = ctx.bundle, ctx.opts, ctx.sweep, ctx.scratch, state.manifest
    tasks = make_tasks(bundle, manifest, opts, scratch)
    n_program = len(tasks)
    seeds = manifest.seed_ids
    if sweep is not None:  # dtype/size sweeps: tasks of their own, the longest first (runners/checks/sweeps.py)
        tasks = make_sweep_tasks(bundle, manifest, sweep, backends=opts.backends, devices=opts.devices,
                                 seed=opts.seed, input_kinds=opts.input_kinds, scratch=scratch,
                                 first_backend=opts.backends[0]) + tasks
        # the seeds' own tasks first, though: one compile each, and the first verdict comes within seconds
        tasks.sort(key=lambda t: not (t.variant in seeds and t.kind != TaskKind.SWEEP))
    if opts.coverage:  # each task writes the compiler lines it reaches (runners/checks/line_gain.py); the seeds'
        # plain tasks first, so that no other compile in their worker has run code that runs once per process
        tasks.sort(key=lambda t: not (str(t.id).split("@")[0] in seeds and t.kind == TaskKind.RUN))
        tasks = coverage_paths(tasks, ctx.out)
    ctx.so_far.tasks = tasks
    feed = _guided_feed(bundle, ctx.out, manifest, opts, scratch, tasks) if opts.guide is not None else None
    results, batch_stats = _run_tasks(tasks, manifest, opts, ctx.stream, ctx.log, ctx.so_far, feed)
    skipped = len(tasks) - len(results)
    if skipped:
        ctx.log(f"time budget of {opts.time_budget:g} s spent: {skipped} of {len(tasks)} tasks not started")
    return dataclasses.replace(
        state, manifest=_grown(manifest, opts), tasks=tasks, results=[r for r in results if not r.is_sweep],
        sweep_results=[r for r in results if r.is_sweep],
        stats={"program_tasks": n_program, "tasks_not_started": skipped, "batch": batch_stats})


def _judge(ctx: RunContext, state: RunState) -> RunState:
    """The verdicts as findings and notes: folded into their seed's, deduplicated, refereed, triaged."""
    opts, manifest, results = ctx.opts, state.manifest, state.results
    findings, notes = judge_results(manifest, results, ctx.scratch, first_backend=opts.backends[0])
    sweep_stats = None
    if state.sweep_results:
        sf, sn, sweep_stats = judge_sweep_results(manifest, state.sweep_results, state.tasks, ctx.scratch,
                                                  opts.backends[0], findings)
        findings += sf
        notes += sn
    if opts.configs:  # verdicts across Inductor configurations: config-mismatch (runners/checks/configs.py)
        findings = config_judge(manifest, results, findings, opts.backends[0], opts.configs, opts.config_overrides)
    folded = len(findings)
    findings = fold_into_seeds(findings)
    folded -= len(findings)
    findings = dedupe(findings)
    # which side is wrong: eager-bug where the independent referee convicts eager (oracle/referee.py)
    findings = [rule_on(f) for f in findings]
    findings = [with_cone(f, ctx.bundle, manifest) for f in findings]
    dyn = {(r.variant, r.backend, r.device): r.dynamo for r in results}

    def with_dynamo(f: Finding) -> Finding:  # graph breaks / recompiles of the task, for triage
        d = dyn.get((f.variant, f.backend, f.device))
        return f.with_(dynamo=d) if d and f.dynamo is None else f

    return dataclasses.replace(state, findings=annotate([with_dynamo(f) for f in findings]),
                               notes=annotate([with_dynamo(n) for n in notes]),
                               stats={**state.stats, "folded_into_seed": folded, "sweep": sweep_stats})


def _write_verdicts(ctx: RunContext, state: RunState) -> RunState:
    """A folder with its repro.py for each candidate, and results.json with every verdict: what an interruption
    from here on keeps whole."""
    opts, out, manifest, results, sweep_results = ctx.opts, ctx.out, state.manifest, state.results, state.sweep_results
    env_text = collect_env() if (state.findings and opts.collect_env) else ""
    written = []
    for k, f in enumerate(state.findings, 1):
        f = f.with_(id=f"{k:03d}-{f.kind}-{f.variant}")
        f = f.with_(repro=str(write_finding(out, f.id, f, ctx.bundle, manifest, env_text=env_text) / "repro.py"))
        ctx.stream.finding(f)
        written.append(f)
    st, tasks = state.stats, state.tasks
    sweep = ctx.sweep
    stats = {"tasks": len(tasks), "program_tasks": st["program_tasks"], "sweep_tasks": len(tasks) - st["program_tasks"],
             "tasks_done": len(results) + len(sweep_results), "tasks_not_started": st["tasks_not_started"],
             "time_budget": opts.time_budget, "sweep_coverage": sweep_coverage(sweep_results, manifest, sweep and sweep.to_dict()).to_dict(),
             "wall_seconds": state.stages["execute"]["seconds"], "backends": list(opts.backends), "devices": list(opts.devices),
             "input_kinds": list(opts.input_kinds), "grad": opts.grad, "folded_into_seed": st["folded_into_seed"],
             "batch": st["batch"], "sweep": st["sweep"], "exec_timings": summed_timings(results)}
    if opts.coverage:
        stats["compiler_lines"] = line_gain(manifest, results + sweep_results)
    if opts.guide is not None:
        stats["guided"] = opts.guide.stats()
    ledger = load_ledger()
    written, clusters = clustered(written, manifest.model, ledger)
    write_results(out, manifest, results + sweep_results, written, state.notes, stats,  # verdicts first
                  clusters, run_note_groups(state.notes, manifest, ctx.bundle))
    ctx.so_far.written = True
    bugs = [f for f in written if f.bug]
    if bugs:  # the verdicts now; confirmation, minimizing and the proofs take longer
        ctx.log(f"verdicts: {len(bugs)} compiler-bug candidate(s) in {len(clusters)} root cause(s), "
                f"{len(state.notes)} note(s) in {out / 'results.json'}; confirming each alone from its repro.py next")
        for c in clusters:
            ctx.log(f"  {c.line()[:200]}")
    return dataclasses.replace(state, findings=written, clusters=clusters, env_text=env_text, ledger=ledger,
                               stats=stats)


def _confirm(ctx: RunContext, state: RunState) -> RunState:
    """Each candidate alone: a warm worker first, a fresh process where that is not enough; a refuted one is a note."""
    opts, written, confirm_stats = ctx.opts, state.findings, None
    if opts.confirm and written:
        written, confirm_stats = confirm_all(written, ctx.out, timeout=opts.timeout, jobs=opts.jobs,
                                             deadline=opts.deadline, log=ctx.log, tasks=state.tasks, env=opts.env)
    elif written:
        written, _ = unconfirmed_timeouts(written)  # a timeout is claimed only once it hangs alone
    notes = state.notes + [f for f in written if not f.bug]
    written = [f for f in written if f.bug]
    confirmed = [f for f in written if f.confirmed is not False]
    labelled, clusters = clustered(confirmed, state.manifest.model, state.ledger)
    return dataclasses.replace(state, findings=replaced(written, confirmed, labelled), confirmed=labelled,
                               notes=notes, clusters=clusters, confirm=confirm_stats)


def _minimize(ctx: RunContext, state: RunState) -> RunState:
    """Once per root cause, its smallest member (runners/findings/clusters.py), within --minimize-seconds; its
    repro.py then runs the minimized program, and the pattern it leaves re-keys its cluster."""
    opts, confirmed, manifest = ctx.opts, state.confirmed, state.manifest
    if not (opts.minimize and confirmed and not past(opts.deadline)):
        return state
    until = time.monotonic() + opts.minimize_seconds
    minimized, reps, pattern_of = minimize_clusters(
        confirmed, state.clusters, ctx.bundle, manifest, state.tasks, opts, ctx.scratch / "minimize", log=ctx.log,
        deadline=min(until, opts.deadline) if opts.deadline is not None else until)
    for f in reps:
        if f.minimized_file:  # the finding's repro.py now runs the minimized program
            g = f.with_(signature=signature(f))
            minimized = replaced(minimized, [f], [g])
            write_finding(ctx.out, g.id, g, ctx.bundle, manifest, env_text=state.env_text)
    labelled, clusters = clustered(minimized, manifest.model, state.ledger, pattern_of)
    return dataclasses.replace(state, findings=replaced(state.findings, confirmed, labelled), confirmed=labelled,
                               clusters=clusters, pattern_of=pattern_of,
                               minimize={"clusters": len(reps), "checks": sum(f.min_checks or 0 for f in labelled)})


def _prove(ctx: RunContext, state: RunState) -> RunState:
    """The proof: each root cause's final repro.py once in a fresh process (runners/findings/confirm.py)."""
    opts, confirmed = ctx.opts, state.confirmed
    if not (opts.confirm and confirmed):
        return state
    proven, proof = prove_all(confirmed, state.clusters, ctx.out, timeout=opts.timeout, jobs=opts.jobs,
                              deadline=opts.deadline, log=ctx.log)
    labelled, clusters = clustered([f for f in proven if f.bug], state.manifest.model, state.ledger, state.pattern_of)
    written = [f for f in replaced(state.findings, confirmed, proven) if f.bug]
    return dataclasses.replace(state, findings=replaced(written, [f for f in proven if f.bug], labelled),
                               confirmed=labelled, clusters=clusters,
                               notes=state.notes + [f for f in proven if not f.bug],
                               confirm={**(state.confirm or {}), "proof": proof})


def _slow_variants(ctx: RunContext, state: RunState) -> RunState:
    """--perf: the slow-variant notes, confirmed A/B (runners/checks/perf.py)."""
    if not ctx.opts.perf:
        return state
    notes = list(state.notes)
    perf = _perf(state.manifest, state.results, ctx.bundle, ctx.opts, notes, ctx.out, ctx.log)
    return dataclasses.replace(state, notes=notes, perf=perf)


def _final_report(ctx: RunContext, state: RunState) -> RunState:
    """meta.json of each root cause's finding (which root cause it is, and whether a known one), and results.json
    again, final: the root causes and the notes' groups first."""
    for f in state.confirmed:
        write_meta(ctx.out / "findings" / str(f.id), f, update=True)
    ctx.stream.close()
    stats = {**state.stats, "wall_seconds_total": round(time.perf_counter() - ctx.started, 3),
             "confirm": state.confirm, "minimize": {"seconds": state.stages["minimize"]["seconds"], **state.minimize},
             "perf": state.perf, "stages": state.stages}
    report = write_results(ctx.out, state.manifest, state.results + state.sweep_results, state.findings, state.notes,
                           stats, state.clusters, run_note_groups(state.notes, state.manifest, ctx.bundle))
    return dataclasses.replace(state, report=report)


# The run, stage by stage (`run_stages`): each name keys its record in results.json's stats.stages.
STAGES: tuple[Stage, ...] = (
    Stage("execute", "executing the tasks", _execute_tasks),
    Stage("judge", "judging the verdicts", _judge),
    Stage("write", "writing the verdicts", _write_verdicts),
    Stage("confirm", "confirming the candidates", _confirm),
    Stage("minimize", "minimizing the findings", _minimize),
    Stage("prove", "proving the repros in fresh processes", _prove),
    Stage("perf", "timing the slow variants", _slow_variants),
    Stage("report", "writing the final results", _final_report),
)


def _guided_feed(bundle: Path, out: Path, manifest: Manifest, opts: ExecOptions, scratch: Path, tasks: list[Task]):
    """`more(result)` for the pool (coverage-guided extraction, rewrite/guide.py): each measured result's
    lines go to the guide; each plain result of the first backend and device draws one variant, whose
    tasks (and sweep tasks) come back to run; they join `tasks`, and the guide's manifest (`_grown`)."""
    guide, first = opts.guide, (opts.backends[0], opts.devices[0])
    assert guide is not None  # (made only for a run with a guide)

    def more(r: Result) -> list[Task]:
        sweep = r.is_sweep
        info = r.compiler_lines or {}  # (a task that failed early has none: its seed's variants still go on)
        guide.feedback(r.variant, as_set(read_lines(info["file"])) if info.get("file") else set(),
                       credit=not sweep)
        if sweep or (r.backend, r.device) != first:
            return []
        new = guide.more(1)
        if not new:
            return []
        sub = manifest.only(new)
        ts = make_tasks(bundle, sub, opts, scratch)
        if opts.sweep is not None:
            ts = make_sweep_tasks(bundle, sub, opts.sweep, backends=opts.backends, devices=opts.devices,
                                  seed=opts.seed, input_kinds=opts.input_kinds, scratch=scratch,
                                  first_backend=opts.backends[0]) + ts
        ts = coverage_paths(ts, out)
        tasks.extend(ts)
        return ts

    return more


def _grown(manifest: Manifest, opts: ExecOptions) -> Manifest:
    """The bundle's manifest with the variants guided extraction drew during the run (the guide holds it)."""
    return opts.guide.manifest if opts.guide is not None else manifest


def _run_tasks(tasks, manifest, opts, stream, log, so_far: SoFar, more=None) -> tuple[list[Result], dict | None]:
    bar = Progress(len(tasks), opts.progress, sweeps=sum(1 for t in tasks if t.kind == TaskKind.SWEEP))
    counts = {"suspicious": 0}

    def on_result(r: Result) -> None:
        stream.result(r)
        so_far.results.append(r)
        if r.status not in (ResultStatus.OK, ResultStatus.EAGER_ERROR) or any(not s.ok for s in r.input_sets):
            counts["suspicious"] += 1
            if counts["suspicious"] == 1 and opts.confirm and "cpu" in opts.devices:  # a candidate: the proof's
                # server imports torch meanwhile (a finding on a GPU is proven in a new interpreter, confirm.fresh_repro)
                prover.prestart(prover.proof_threads(opts.jobs))
        bar.update(r, counts["suspicious"])

    batch_stats = None
    try:
        pool = pool_options(opts, opts.deadline)
        if opts.batch != 1 and not opts.grad and not opts.coverage:  # K variants per compile, suspects confirmed alone (runners/exec/batch.py)
            ops = {g.id: g.ops for g in manifest.graphs}
            k = opts.batch if opts.batch > 1 else (lambda g: auto_batch_size(ops.get(g[0], 0)))
            results, batch_stats = run_batched(tasks, pool, k, batch_group(manifest), on_result=on_result,
                                               log=log, batch_timeout=opts.timeout * 4,
                                               seed_of=seed_tasks(manifest, tasks))
        else:
            def grow(r: Result) -> list[Task]:  # guided extraction: the tasks of variants drawn now
                ts = more(r)
                bar.total += len(ts)
                return ts

            results = run_tasks(tasks, pool, on_result=on_result, log=log, more=grow if more is not None else None)
    finally:
        bar.close()
    return results, batch_stats


def _perf(manifest, results, bundle, opts, notes, out, log) -> dict:
    """slow-variant notes, confirmed A/B (runners/checks/perf.py); their folders are written here."""
    t1 = time.perf_counter()
    cores = os.cpu_count() or 1  # the workers' threads (runners/exec/pool.py): one share of the cores each
    found, screened = slow_variant_findings(manifest, results, bundle, threshold=opts.perf_threshold, env=opts.env,
                                           threads=max(1, cores // max(1, opts.jobs)) if opts.jobs > 1 else cores,
                                           log=log)
    for k, n in enumerate(annotate(found), 1):
        n = n.with_(id=f"slow-{k:03d}-{n.variant}")
        folder = write_slow_variant(out, n.id, n, bundle, manifest)
        write_meta(folder, n, MetaContext(versions=versions(), model=manifest.model))
        notes.append(n.with_(folder=str(folder)))
    return {"spread": spread(manifest, results), "screened": screened, "threshold": opts.perf_threshold,
            "seconds_timing": round(sum((r.perf or {}).get("seconds", 0.0) for r in results), 3),
            "seconds_confirm": round(time.perf_counter() - t1, 3)}

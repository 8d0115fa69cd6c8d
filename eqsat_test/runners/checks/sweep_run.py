"""Worker side of dtype/size sweeps: run a program's sweep points in batched compiles, confirm each failure alone (see runners/checks/sweeps.py)."""
from __future__ import annotations

import hashlib
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from eqsat_test.runners.checks.sweep_plan import (
    DTYPES,
    LOW_PRECISION,
    Plan,
    Point,
    SweepConfig,
    analyse,
    plan_points,
    point_inputs,
)
from eqsat_test.runners.oracle.inputs import InputSet, to_device_as_is
from eqsat_test.runners.oracle.judge import Verdict, judge
from eqsat_test.runners.oracle.referee import NO_REFEREE, RefereeVerdict, referee_crash, referee_mismatch, safely
from eqsat_test.runners.oracle.reference import conditioned, eager_reference
from eqsat_test.runners.protocol import (
    call_compiled,
    compile_options,
    cpu_error,
    error_info,
    first_line,
    load_module,
    on_cpu,
    phase,
    program_entry,
    reseed,
    to_cpu,
)
from eqsat_test.runners.records import FindingKind, Result, ResultDraft, ResultStatus, Task


def _batched(fn):
    def batched(*groups):
        return [fn(*g) for g in groups]
    return batched


def _to_fp32(inputs: tuple) -> tuple:
    return tuple(x.to(torch.float32) if isinstance(x, torch.Tensor) and x.dtype in LOW_PRECISION else x
                 for x in inputs)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9=.-]+", "_", text).strip("_")


def _fingerprint(inputs: tuple) -> str:
    desc = [(str(x.dtype), tuple(x.shape)) if isinstance(x, torch.Tensor) else repr(x) for x in inputs]
    return hashlib.sha256(repr(desc).encode()).hexdigest()[:6]


@dataclass
class _Job:
    """One point: its inputs and eager results per input set."""

    point: Point
    inputs: dict[str, tuple]
    eager: dict[str, dict] = field(default_factory=dict)  # set -> {ref, ref2, fp64, ref32, idx}
    bad: dict[str, str] = field(default_factory=dict)  # set -> eager error

    def name(self, set_name: str) -> str:
        return f"sweep-{_slug(self.point.label)}-{_fingerprint(self.inputs['random'])}-{set_name}"


class _Sweeper:
    def __init__(self, mod, base, is_param, cfg: SweepConfig, plan: Plan, *, backend: str, opts: dict,
                 device: torch.device, save_eager: str | None, save_compiled: str | None, progress=None):
        self.mod, self.base, self.is_param, self.cfg, self.plan = mod, tuple(base), is_param, cfg, plan
        self.backend, self.opts, self.device = backend, dict(opts), device
        self.save_eager = Path(save_eager) if save_eager else None
        self.save_compiled = Path(save_compiled) if save_compiled else None
        self.entries: list[dict] = []
        self.compiles = 0
        self.deadline = time.perf_counter() + cfg.seconds
        self.truncated = False
        self.progress = progress or (lambda labels: None)
        self.confirmed_categories: set[str] = set()
        self.tries: dict[str, int] = {}
        self.timings: dict[str, float] = {}

    def _timed(self, phase: str, t0: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + time.perf_counter() - t0

    # -- eager -----------------------------------------------------------------------------
    def _eager(self, set_name: str, inputs: tuple, lowp: bool) -> dict:
        # eager twice, fp64, index sources, compute dtype: as a plain task (runners/worker.py)
        r = eager_reference(self.mod.forward, self.mod.index_sources, InputSet(set_name, tuple(inputs)),
                            cpu_forward=on_cpu(self.mod))
        ref32 = None
        if lowp:  # the program in float32 too: the lenient judge's second opinion
            try:
                with torch.no_grad():
                    reseed()
                    ref32 = self.mod.forward(*_to_fp32(inputs))
            except Exception:
                pass
        return {"ref": r.ref, "ref2": r.ref2, "fp64": r.fp64, "fp64p": r.fp64p, "fp64mc": r.fp64mc,
                "fp64_beyond": r.fp64_beyond, "ties": r.ties, "ref32": ref32, "idx": r.idx, "low": r.compute_dtype, "fp64_low": r.fp64_low,
                "origins": r.origins}

    def _lenient(self, point: Point) -> bool:
        return bool(point.dtype and DTYPES[point.dtype] in LOW_PRECISION and self.plan.discontinuous)

    def prepare(self, point: Point) -> _Job | None:
        t0 = time.perf_counter()
        try:
            return self._prepare(point)
        finally:
            self._timed("eager", t0)

    def _prepare(self, point: Point) -> _Job | None:
        phase("eager")  # the worker pool: a death from here on is the program's own (SIGFPE in eager)
        point_vals = point_inputs(self.base, self.is_param, self.plan, point, self.cfg.seed)
        inputs = {k: tuple(to_device_as_is(x, self.device) if isinstance(x, torch.Tensor) else x for x in v)
                  for k, v in point_vals.items()}
        job = _Job(point, inputs)
        for set_name, vals in inputs.items():
            # a value the program refuses is a device-side assert on CUDA (protocol.cpu_error): the CPU first
            err = cpu_error(self.mod, point_vals[set_name]) if self.device.type == "cuda" else None
            if err is not None:
                job.bad[set_name] = err
                continue
            try:
                job.eager[set_name] = self._eager(set_name, vals, self._lenient(point))
            except Exception as e:
                job.bad[set_name] = first_line(e)
        if "random" in job.bad:
            return None
        if self.save_eager is not None:
            self.save_eager.mkdir(parents=True, exist_ok=True)
            for set_name, e in job.eager.items():
                torch.save(to_cpu(e["ref"]), self.save_eager / f"{job.name(set_name)}.pt")
                if self.cfg.full and e.get("fp64") is not None:  # a seed's: the unsound check's yardstick
                    torch.save(to_cpu(e["fp64"]), self.save_eager / f"{job.name(set_name)}.fp64.pt")
        return job

    # -- compiled --------------------------------------------------------------------------
    def _compile(self, fn, dynamic: bool):
        phase("compile")
        torch._dynamo.reset()
        self.compiles += 1
        opts = dict(self.opts)
        if dynamic:
            opts["dynamic"] = True
        else:
            opts.setdefault("dynamic", False)
        return torch.compile(fn, backend=self.backend, **opts)

    def _compile_program(self, dynamic: bool):
        """The program alone, compiled as the worker compiles it: one that writes its inputs, as it writes them
        (protocol.program_entry); called like `forward`."""
        entry, wrap = program_entry(self.mod)
        return wrap(self._compile(entry, dynamic=dynamic))

    def _call(self, fn, args):
        with torch.no_grad():
            reseed()
            out = call_compiled(fn, args, self.opts)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return out

    def _judge(self, job: _Job, set_name: str, got) -> Verdict:
        deferred = ("fp64p", "fp64mc", "fp64_beyond", "ties")
        e = to_cpu({k: v for k, v in job.eager[set_name].items() if k not in ("low",) + deferred})  # CPU copies
        origins = job.eager[set_name].get("origins")  # (their masks are on the CPU)
        low = job.eager[set_name].get("low")  # the coarsest dtype the program computes in
        extreme = set_name.startswith("special")  # values near the dtype's range
        got = to_cpu(got)
        wider = (e["ref32"], e["fp64"]) if self._lenient(job.point) else None  # lenient.wider-run's programs
        return conditioned(lambda fp, mc, beyond, g: judge(e["ref"], g, e["fp64"], ref2=e["ref2"], index_info=e["idx"],
                                                        dtype_hint=low, extreme_inputs=extreme, fp64_perturbed=fp,
                                                        fp64_low=e["fp64_low"], fp64_rounded=mc, fp64_beyond=beyond,
                                                        origins=origins, lenient=wider),
                           e["ref"], got, *(job.eager[set_name][k] for k in deferred), index_paths=set(e["idx"] or {}))

    def _entry(self, job: _Job, set_name: str, **kw) -> dict:
        p = job.point
        shapes = [list(x.shape) for x in job.inputs[set_name] if isinstance(x, torch.Tensor)]
        if kw.get("ok") is False and kw.get("confirmed") and set_name in job.eager:
            kw["referee"] = self._referee(job, set_name, kw)
        return {"name": job.name(set_name), "set": set_name, "sweep": p.label, "sweep_key": p.key,
                "sweep_category": p.category, "sweep_dtype": p.dtype, "shapes": shapes, **kw}

    def _referee(self, job: _Job, set_name: str, kw: dict) -> dict:
        """The independent referee on a confirmed failure (runners/oracle/referee.py): the compiled output is
        the one _save_inputs kept beside the inputs; a crash has none."""
        inputs, ref = list(job.inputs[set_name]), job.eager[set_name]["ref"]
        if kw.get("kind") in (FindingKind.COMPILE_CRASH.value, FindingKind.RUN_CRASH.value):
            return safely(referee_crash, self.mod.forward, inputs, ref)
        out = Path(str(kw.get("inputs_file") or "").removesuffix(".inputs.pt") + ".out.pt")
        if not kw.get("inputs_file") or not out.is_file():
            return RefereeVerdict(NO_REFEREE, reason="the compiled output was not kept").to_dict()
        return safely(referee_mismatch, self.mod.forward, inputs, ref, torch.load(out, weights_only=False),
                      kw.get("leaf"), tuple(kw.get("failing") or ()))

    def _save_inputs(self, job: _Job, set_name: str, got=None, warmup: list | None = None) -> dict:
        if self.save_compiled is None:
            return {}
        self.save_compiled.mkdir(parents=True, exist_ok=True)
        stem = self.save_compiled / job.name(set_name)
        out = {"inputs_file": str(stem) + ".inputs.pt"}
        torch.save(to_cpu(list(job.inputs[set_name])), out["inputs_file"])
        if got is not None:
            torch.save(to_cpu(got), str(stem) + ".out.pt")
        if warmup:
            out["warmup_file"] = str(stem) + ".warmup.pt"
            torch.save([to_cpu(list(w)) for w in warmup], out["warmup_file"])
        return out

    def _crash_entry(self, job: _Job, set_name: str, kind: str, e: BaseException, confirmed: bool) -> dict:
        err = error_info(e)
        extra = self._save_inputs(job, set_name) if confirmed else {}
        if job.point.dynamic:
            extra["compile_extra"] = {"dynamic": True}
        return self._entry(job, set_name, ok=False, kind=kind, max_abs_err=0.0, max_rel_err=0.0, leaf=None,
                           detail=f"{err['type']}: {err['message']}", error=err, confirmed=confirmed, **extra)

    def _want_confirm(self, job: _Job) -> bool:
        cat = job.point.category
        if cat in self.confirmed_categories or self.tries.get(cat, 0) >= 3 or time.perf_counter() > self.deadline:
            return False
        self.tries[cat] = self.tries.get(cat, 0) + 1
        return True

    def _confirm_static(self, job: _Job, set_name: str) -> tuple[bool, Any, Verdict | BaseException]:
        """Fresh compile of the program alone on this set: (still fails, output, verdict or error)."""
        t0 = time.perf_counter()
        fn = self._compile_program(dynamic=False)
        try:
            got = self._call(fn, job.inputs[set_name])
        except Exception as e:
            return True, None, e
        finally:
            self._timed("confirm", t0)
        v = self._judge(job, set_name, got)
        return not v.ok, got, v

    def run_static(self, jobs: list[_Job]) -> None:
        if not jobs:
            return
        if time.perf_counter() > self.deadline:
            self.truncated = True
            return
        self.progress([j.point.label for j in jobs])
        fn = self._compile(_batched(self.mod.forward), dynamic=False)
        outs: dict[str, list] = {}
        for k, set_name in enumerate(("random", "special")):
            args = [j.inputs[set_name] if set_name not in j.bad else j.inputs["random"] for j in jobs]
            t0 = time.perf_counter()
            try:
                outs[set_name] = self._call(fn, args)
            except Exception as e:
                self._timed("static", t0)
                if len(jobs) > 1:
                    half = len(jobs) // 2
                    self.run_static(jobs[:half])
                    self.run_static(jobs[half:])
                    return
                job = jobs[0]
                kind = FindingKind.COMPILE_CRASH.value if k == 0 else FindingKind.RUN_CRASH.value
                if self._want_confirm(job):
                    still, _, err = self._confirm_static(job, set_name)
                    if still and isinstance(err, BaseException):
                        self.confirmed_categories.add(job.point.category)
                        self.entries.append(self._crash_entry(job, set_name, kind, err, True))
                        return
                self.entries.append(self._crash_entry(job, set_name, kind, e, False))
                return
            self._timed("static", t0)
        t0 = time.perf_counter()
        for j, job in enumerate(jobs):
            for set_name in ("random", "special"):
                if set_name in job.bad:
                    self.entries.append(self._entry(job, set_name, ok=True, kind="skipped", max_abs_err=0.0,
                                                    max_rel_err=0.0, leaf=None,
                                                    detail=f"eager raises: {job.bad[set_name]}"))
                    continue
                got = outs[set_name][j]
                v = self._judge(job, set_name, got)
                if v.ok:
                    self.entries.append(self._entry(job, set_name, **v.to_dict()))
                    continue
                confirmed = None
                extra: dict = {}
                if len(jobs) == 1 and job.point.category not in self.confirmed_categories:
                    # a batch of one is the program alone (Dynamo inlines it): already confirmed
                    confirmed = True
                    self.confirmed_categories.add(job.point.category)
                    extra = self._save_inputs(job, set_name, got)
                elif self._want_confirm(job):
                    still, got1, v1 = self._confirm_static(job, set_name)
                    confirmed = still
                    if still and isinstance(v1, BaseException):
                        self.confirmed_categories.add(job.point.category)
                        self.entries.append(self._crash_entry(job, set_name, FindingKind.RUN_CRASH.value, v1, True))
                        continue
                    if still:
                        v = v1
                        self.confirmed_categories.add(job.point.category)
                        extra = self._save_inputs(job, set_name, got1)
                self.entries.append(self._entry(job, set_name, **v.to_dict(), confirmed=confirmed, **extra))
        self._timed("judge", t0)

    def run_dynamic(self, seq: list[tuple[int, ...]], dtypes: list[str | None]) -> None:
        """One dynamic=True compile called with every size of `seq` (all dtypes batched)."""
        if len(seq) < 2 or time.perf_counter() > self.deadline:
            self.truncated = self.truncated or bool(seq)
            return
        first_jobs = []
        for d in dtypes:
            job = self.prepare(Point(d, seq[0], dynamic=True))
            if job is not None:
                first_jobs.append(job)
        if not first_jobs:
            return
        slots = [j.point.dtype for j in first_jobs]
        self.progress([f"dynamic over {len(seq)} sizes, dtypes {slots}"])
        fn = self._compile(_batched(self.mod.forward), dynamic=True)
        for c, sizes in enumerate(seq):
            if time.perf_counter() > self.deadline:
                self.truncated = True
                return
            jobs = first_jobs if c == 0 else [self.prepare(Point(d, sizes, dynamic=True)) for d in slots]
            for k, set_name in enumerate(("random", "special")):
                args = []
                for job, first in zip(jobs, first_jobs):
                    usable = job is not None and set_name not in job.bad
                    args.append(job.inputs[set_name] if usable else first.inputs["random"])
                t0 = time.perf_counter()
                try:
                    outs = self._call(fn, args)
                except Exception as e:
                    self._timed("dynamic", t0)
                    # attribute it: each dtype alone, fresh dynamic compile, warm-up then this call
                    for job, first in zip(jobs, first_jobs):
                        if job is None or set_name in job.bad:
                            continue
                        kind = FindingKind.COMPILE_CRASH.value if c == 0 and k == 0 else FindingKind.RUN_CRASH.value
                        if self._want_confirm(job):
                            res = self._confirm_dynamic(job, set_name, first if c else None)
                            if res is not None and isinstance(res[2], BaseException):
                                self.confirmed_categories.add("dynamic")
                                entry = self._crash_entry(job, set_name, kind, res[2], True)
                                if res[3]:
                                    entry.update(self._save_inputs(job, set_name, warmup=res[3]))
                                self.entries.append(entry)
                                return
                    self.entries.append(self._crash_entry(jobs[0] or first_jobs[0], set_name,
                                                          FindingKind.COMPILE_CRASH.value if c == 0 and k == 0
                                                          else FindingKind.RUN_CRASH.value,
                                                          e, False))
                    return
                self._timed("dynamic", t0)
                t0 = time.perf_counter()
                for job, first, got in zip(jobs, first_jobs, outs):
                    if job is None or set_name in job.bad:
                        continue
                    v = self._judge(job, set_name, got)
                    if v.ok:
                        self.entries.append(self._entry(job, set_name, **v.to_dict()))
                        continue
                    confirmed, extra = None, {}
                    if self._want_confirm(job):
                        res = self._confirm_dynamic(job, set_name, first if c else None)
                        confirmed = res is not None
                        if res is not None:
                            still, got1, v1, warm = res
                            self.confirmed_categories.add("dynamic")
                            if isinstance(v1, BaseException):
                                entry = self._crash_entry(job, set_name, FindingKind.RUN_CRASH.value, v1, True)
                                if warm:
                                    entry.update(self._save_inputs(job, set_name, warmup=warm))
                                self.entries.append(entry)
                                continue
                            v = v1
                            extra = self._save_inputs(job, set_name, got1, warmup=warm)
                            extra["compile_extra"] = {"dynamic": True}
                    self.entries.append(self._entry(job, set_name, **v.to_dict(), confirmed=confirmed, **extra))
                self._timed("judge", t0)

    def _confirm_dynamic(self, job: _Job, set_name: str, first: _Job | None):
        """(True, output, verdict or error, warm-up inputs) when a fresh dynamic compile of the
        program alone fails on this set: first called with it alone, then after the first size."""
        tries: list = [[]] + ([[first.inputs["random"]]] if first is not None else [])
        for warm in tries:
            t0 = time.perf_counter()
            fn = self._compile_program(dynamic=True)
            try:
                try:
                    for w in warm:
                        self._call(fn, w)
                except Exception:
                    continue  # the warm-up itself fails: not this
                try:
                    got = self._call(fn, job.inputs[set_name])
                except Exception as e:
                    return True, None, e, warm
            finally:
                self._timed("confirm", t0)
            v = self._judge(job, set_name, got)
            if not v.ok:
                return True, got, v, warm
        return None


def run_sweeps(mod, base, is_param, cfg: SweepConfig, *, backend: str = "inductor", opts: dict | None = None,
               device: torch.device | str = "cpu", save_eager: str | None = None,
               save_compiled: str | None = None, progress=None) -> dict:
    """Analyse, plan and run the sweep of one program: {"entries": [...], "summary": {...}}."""
    t0 = time.perf_counter()
    device = torch.device(device)
    base = tuple(base)
    is_param = list(is_param or [False] * len(base))
    sys.modules.setdefault(mod.__name__, mod)  # Dynamo inlines `forward` through the batch wrapper
    dyn_cfg = torch._dynamo.config
    saved = {k: getattr(dyn_cfg, k) for k in ("recompile_limit", "accumulated_recompile_limit") if hasattr(dyn_cfg, k)}
    for k in saved:
        setattr(dyn_cfg, k, max(saved[k], 64 if k == "recompile_limit" else 1024))
    try:
        plan = analyse(mod, base, is_param, cfg)
        static, dyn = plan_points(base, plan, cfg, is_param)
        sw = _Sweeper(mod, base, is_param, cfg, plan, backend=backend, opts=opts or {}, device=device,
                      save_eager=save_eager, save_compiled=save_compiled, progress=progress)
        t_analysis = time.perf_counter() - t0
        skipped_points = []
        jobs = []
        for p in static:
            job = sw.prepare(p)
            if job is None:
                skipped_points.append(p.label)
            else:
                jobs.append(job)
        for k in range(0, len(jobs), max(1, cfg.batch)):
            sw.run_static(jobs[k:k + max(1, cfg.batch)])
        if dyn:
            dtypes = [None] + ([d for d in cfg.dtypes if d in plan.dtypes] if cfg.full else [])
            sw.run_dynamic(dyn, dtypes)
    finally:
        for k, v in saved.items():
            setattr(dyn_cfg, k, v)
        torch._dynamo.reset()
    judged = [e for e in sw.entries if e.get("kind") not in ("skipped",)]
    summary = {**plan.summary(), "points": [p.label for p in static], "point_categories": [p.category for p in static],
               "dynamic_sizes": [list(a) for a in dyn],
               "eager_invalid_points": skipped_points, "judged": len(judged),
               "failing": sum(1 for e in sw.entries if not e["ok"]), "compiles": sw.compiles,
               "truncated": sw.truncated, "seconds": round(time.perf_counter() - t0, 3),
               "analysis_seconds": round(t_analysis, 3), "full": cfg.full,
               "phase_seconds": {k: round(v, 3) for k, v in sw.timings.items()}}
    return {"entries": sw.entries, "summary": summary}


def run_sweep_task(task: Task) -> Result:
    """The worker's handler of a task of kind "sweep": the variant's sweep, as a worker result."""

    device = torch.device(task.device)
    res = ResultDraft(task=task.id, variant=task.variant, backend=task.backend, device=device.type,
                      status=ResultStatus.OK, sweep_task=True)
    t0 = time.perf_counter()
    phase("eager")  # the analysis runs the program eagerly first
    mod = load_module(task.file)
    mod.DEVICE = device
    base = mod.get_inputs(device)
    cfg = SweepConfig.from_dict(task.sweep)
    backend, opts = compile_options(task.backend)
    progress_file = Path(task.save_compiled) / "sweep-progress.txt" if task.save_compiled else None

    def progress(labels):
        if progress_file is not None:
            progress_file.parent.mkdir(parents=True, exist_ok=True)
            progress_file.write_text("\n".join(labels) + "\n")

    out = run_sweeps(mod, base, task.is_param, cfg, backend=backend, opts=opts, device=device,
                     save_eager=task.save_eager, save_compiled=task.save_compiled, progress=progress)
    res.input_sets = out["entries"]
    res.sweep = out["summary"]
    res.timings["sweep"] = time.perf_counter() - t0
    return res.freeze()

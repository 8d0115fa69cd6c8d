"""Judging a run's worker results: findings and notes from the verdicts (`judge_results`), and OUT/results.json
written from them (`write_results`); the pipeline's judge and report stages call these."""
from __future__ import annotations

from pathlib import Path

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.checks.devices import cross_device_findings
from eqsat_test.runners.checks.unsound import eager_failure_kind, unsound_verdict
from eqsat_test.runners.findings.clusters import failing_cone
from eqsat_test.runners.oracle.verdict import rule_totals
from eqsat_test.runners.protocol import versions
from eqsat_test.runners.records import (
    CRASH_STATUSES,
    Finding,
    FindingKind,
    Result,
    ResultStatus,
    RunResults,
    exit_code_of,
    new_finding,
)


def judge_results(manifest: Manifest, results: list[Result], scratch: Path,
                  first_backend: str | None = None) -> tuple[list[Finding], list[Finding]]:
    """Turn worker results into findings (compiler bugs and informational notes). The
    unsound-rewrite check reads the eager outputs that the tasks of `first_backend` saved."""
    findings: list[Finding] = []
    notes: list[Finding] = []
    seeds = manifest.seed_of
    by_task: dict[tuple, Result] = {(r.variant, r.backend, r.device): r for r in results}
    for r in results:
        v = manifest.variant(r.variant)
        base = {"variant": v.id, "graph": v.graph, "backend": r.backend, "device": r.device, "rules": list(v.rules),
                "mode": v.mode, "ops": sorted(set(manifest.graph(v.graph).op_names)), "seed": v.seed}
        if r.training is not None:  # training mode: its repro runs forward and backward (findings/write.py)
            base.update(grad=True, not_differentiated=r.training.get("not_differentiated", []))
        status = r.status
        if status == ResultStatus.TIMEOUT or status in CRASH_STATUSES:
            kind = FindingKind.RUN_CRASH if status == ResultStatus.PROCESS_CRASH else FindingKind.parse(status)
            findings.append(new_finding(kind, base, error=r.error, input_set=r.input_set,
                                        detail=r.error_message, referee=r.referee))
            continue
        if status == ResultStatus.EAGER_ERROR:
            seed_r = None if v.seed else by_task.get((seeds[v.graph], r.backend, r.device))
            if seed_r is not None and seed_r.status == ResultStatus.EAGER_ERROR and (
                    seed_r.error_message == r.error_message):
                continue  # it fails as its seed does: the seed's note says it, no rule is to blame
            kind = eager_failure_kind(r.error_message, v.seed)  # the emitter's fault, or the rules'
            if kind == FindingKind.SEED_ERROR:
                notes.append(new_finding(kind, base, detail=r.error_message))
            else:
                notes.append(new_finding(kind, base, detail=
                             f"variant raises in eager mode: {(r.error or {})['type']}: {(r.error or {})['message']}"))
            continue
        if status == ResultStatus.INTERNAL_ERROR:
            notes.append(new_finding(FindingKind.INTERNAL_ERROR, base, detail=r.error_message,
                                     error=r.error))
            continue
        # An input set the program refuses is set aside (the worker); a variant that refuses one its seed runs on
        # does not compute what its seed computes.
        seed_r = None if v.seed else by_task.get((seeds[v.graph], r.backend, r.device))
        if r.set_aside and seed_r is not None and seed_r.status == ResultStatus.OK:
            extra = {k: m for k, m in r.set_aside.items() if k not in (seed_r.set_aside or {})}
            if extra:
                name, message = next(iter(extra.items()))
                notes.append(new_finding(eager_failure_kind(message, False), base, input_set=name, detail=
                             f"variant raises in eager mode on an input set its seed runs on: {message}"))
        for s in r.input_sets:
            if s.kind == "nondeterministic":
                notes.append(new_finding(FindingKind.NONDETERMINISTIC, base, input_set=s.name, detail=s.detail))
                break
            if not s.ok:
                kind = (FindingKind.GRAD_MISCOMPILE if s.part == "gradient" else
                        FindingKind.COMPILED_NONDETERMINISTIC if s.kind == FindingKind.COMPILED_NONDETERMINISTIC
                        else FindingKind.SEED_MISCOMPILE if v.seed else FindingKind.MISCOMPILE)
                written = s.written_input  # a failing leaf that is an input the program writes
                carried = {k: getattr(s, k) for k in ("grad_input", "grad_stage", "warmup_file")
                           if getattr(s, k) is not None}
                findings.append(new_finding(kind, base, input_set=s.name, max_abs_err=s.max_abs_err,
                                            max_rel_err=s.max_rel_err, leaf=s.leaf,
                                            detail=f"written input {written}: {s.detail}" if written else s.detail,
                                            **({"written_input": written} if written else {}),
                                            failing_inputs=s.inputs_file, referee=s.referee, **carried))
                break
        # Unsound rewrite: this variant's eager output vs its seed's, on the same input sets.
        if not v.seed and r.backend == (first_backend or r.backend):
            sd = scratch / "eager" / f"{seeds[v.graph]}__{r.device}"
            vd = scratch / "eager" / f"{v.id}__{r.device}"
            for s in r.input_sets:  # the first input set where the variant's eager output is not its seed's
                verdict = unsound_verdict(sd / f"{s.name}.pt", vd / f"{s.name}.pt", v, manifest,
                                          sd / f"{s.name}.fp64.pt" if r.training is not None else None)
                if verdict is not None:
                    notes.append(new_finding(FindingKind.UNSOUND_REWRITE, base, input_set=s.name,
                                             max_abs_err=verdict.max_abs_err, detail=verdict.detail))
                    break
    # Across devices: compiled cpu vs compiled cuda of the same variant and input set (runners/checks/devices.py).
    if len({r.device for r in results}) > 1:
        findings, across = cross_device_findings(manifest, results, scratch, findings, notes)
        findings += across
    def with_code(f: Finding) -> Finding:  # where Inductor left its code; read only when the finding is written
        r = by_task.get((f.variant, f.backend, f.device))
        code = {k: getattr(r, k) for k in ("kernel_files", "kernel_source_file")
                if getattr(r, k, None) and not getattr(f, k)}
        return f.with_(**code) if code else f

    return [with_code(f) for f in findings], notes


def summed_timings(results: list[Result]) -> dict:
    """Each worker timing (load, eager, compile, run ...) summed over the results, in seconds."""
    timings: dict[str, float] = {}
    for r in results:
        for k, v in r.timings.items():
            timings[k] = timings.get(k, 0.0) + v
    return {k: round(v, 3) for k, v in timings.items()}


def write_results(out: Path, manifest: Manifest, raw: list[Result], written: list[Finding], notes: list[Finding],
                  stats: dict, clusters: list | None = None, note_groups: list | None = None,
                  partial: bool = False) -> dict:
    """OUT/results.json ({"report", "raw"}); returns the report (the CLI's --json object). The report
    opens with the root causes (`clusters`) and the notes' groups; `findings` has every one of them.
    `partial`: an interrupted run's, from the tasks that had finished."""
    executed = sum(1 for r in raw if r.status != ResultStatus.INTERNAL_ERROR and not r.is_sweep)
    seeds = manifest.seed_ids
    clusters, note_groups = list(clusters or []), list(note_groups or [])
    report = {
        "clusters": [c.to_dict() for c in clusters], "note_groups": [g.to_dict() for g in note_groups],
        "model": manifest.model, "torch_version": versions()["torch"], "variants": manifest.rewritten_count,
        "executed": executed, "sizes": manifest.sizes, "partial": partial,
        "findings": [],  # (RunResults' findings)
        "stats": {**stats, "compiler_bugs": sum(1 for f in written if f.compiler_bug),
                  "eager_bugs": sum(1 for f in written if f.kind == FindingKind.EAGER_BUG), "notes": len(notes),
                  "root_causes": len(clusters),
                  "exposed_only_by_rewrites": sum(1 for c in clusters if not c.seed_fails),
                  "note_groups": len(note_groups),
                  "internal_errors": sum(1 for n in notes if n.kind in (FindingKind.INTERNAL_ERROR,
                                                                          FindingKind.EMIT_ERROR)),
                  # input sets the seed program itself raises on (not judged): name -> the error's first line
                  "set_aside": {k: m for r in raw if r.variant in seeds
                                for k, m in (r.set_aside or {}).items()},
                  "triage": {c: sum(1 for f in written if f.triage == c) for c in
                             sorted({f.triage for f in written if f.triage})},
                  # the oracle's rules over every verdict: elements each convicted, cleared or noted
                  "oracle_rules": rule_totals(s.to_dict() for r in raw for s in r.input_sets)},
    }
    results = RunResults(report=report, findings=tuple(f.public() for f in [*written, *notes]), raw=tuple(raw))
    results.write(out)
    return results.report_dict()


def exit_code(report: dict) -> int:
    """1: compiler-bug candidates; else 3 if eqsat-test itself failed on some task; else 0."""
    return int(exit_code_of([f["kind"] for f in report["findings"]], report["stats"].get("internal_errors", 0)))



def with_cone(f: Finding, bundle: Path, manifest: Manifest) -> Finding:
    """f with the ops its failing output depends on (the clusters' pattern before minimization), and the
    dtypes of the inputs it reads (ledger matching)."""
    cone = failing_cone(f, bundle, manifest)
    return f if cone is None else f.with_(cone_ops=cone[0], input_dtypes=cone[1])

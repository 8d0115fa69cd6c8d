"""Lines of the run summary about what was run: the rules used and left out, the tasks executed (the count the progress lines use), the sweeps' coverage."""
from __future__ import annotations

from eqsat_test.lowering.manifest import Manifest
from eqsat_test.runners.checks.sweep_coverage import SweepCoverage, coverage_lines


def rules_lines(manifest: Manifest) -> list[str]:
    fired = manifest.rules.fired
    gs = manifest.graphs
    lines = [f"  graphs: {len(gs)} ({sum(g.ops for g in gs)} ops) | rules: {manifest.rules.count} loaded, "
             f"{sum(1 for n in fired.values() if n)} fired"]
    left = manifest.rules.left_out
    if left:
        lines.append(f"  rules left out: {', '.join(sorted(left))}: your rule(s) failing their quick check at load "
                     f"(`eqsat-test rules check FILE` says why; --allow-unsound-rules uses them)")
    return lines


def executed_lines(report: dict) -> list[str]:
    """The tasks, counted as the progress lines count them: program tasks (variants and seeds x backends
    x devices) and sweep tasks, each a task run by a worker."""
    st = report["stats"]
    total, done = st.get("tasks", report["executed"]), st.get("tasks_done", report["executed"])
    sweeps = st.get("sweep_tasks") or 0
    parts = f" ({st.get('program_tasks', total - sweeps)} program tasks + {sweeps} sweep tasks)" if sweeps else ""
    budget = f", {st['tasks_not_started']} not started (--time-budget spent)" if st.get("tasks_not_started") else ""
    return [f"  executed: {done}/{total} tasks{parts}: {report['variants']} variants + seeds x "
            f"{'/'.join(st['backends'])} on {'/'.join(st['devices'])}, inputs {','.join(st['input_kinds'])}, "
            f"{st['wall_seconds']:.0f} s wall{budget}"]


def sweep_lines(report: dict) -> list[str]:
    st = report["stats"]
    cov = st.get("sweep_coverage")
    return coverage_lines(SweepCoverage.from_dict(cov) if cov else None, st.get("sweep"))


def stages_line(report: dict) -> list[str]:
    """Where the run's time went, stage by stage (wall seconds; a task's own stages summed over the tasks)."""
    st = report["stats"]
    parts = []
    gen = sum(((st.get("timings") or {}).get("generate_wall") or {}).values())  # (`run` only)
    if gen:
        parts.append(f"generate {gen:.1f} s")
    t = st.get("exec_timings") or {}
    n, sweep = st.get("program_tasks", st.get("tasks", 0)), st.get("sweep") or {}
    inside = ", ".join(f"{k} {t[k]:.1f} s" for k in ("compile", "eager", "load") if t.get(k))
    parts.append(f"execute {st.get('wall_seconds', 0):.1f} s ({n} program tasks{': ' + inside if inside else ''}"
                 + (f"; {sweep.get('tasks', 0)} sweep tasks: {sweep.get('seconds', 0):.1f} s" if sweep else "") + ")")
    conf = st.get("confirm") or {}
    if conf.get("checked") or conf.get("skipped"):
        parts.append(f"confirm {conf.get('seconds', 0):.1f} s ({conf.get('warm', 0)} in a warm worker, "
                     f"{conf.get('fresh', 0)} in a fresh process)")
    mini = st.get("minimize") or {}
    if mini.get("checks"):
        parts.append(f"minimize {mini.get('seconds', 0):.1f} s ({mini['checks']} checks)")
    proof = conf.get("proof") or {}
    if proof:
        runs = proof.get("proven", 0) + proof.get("not_reproduced", 0)
        parts.append(f"prove {proof.get('seconds', 0):.1f} s ({runs} fresh process{'es' if runs != 1 else ''})")
    return ["  time: " + " | ".join(parts)]

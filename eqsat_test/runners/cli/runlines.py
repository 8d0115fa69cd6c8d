"""Lines of the run summary about what was run: the rules used and left out, the tasks executed (the count the progress lines use), the sweeps' coverage."""
from __future__ import annotations

from eqsat_test.runners.checks.sweep_coverage import SweepCoverage, coverage_lines


def rules_lines(manifest: dict) -> list[str]:
    fired = manifest["rules"].get("fired", {})
    gs = manifest["graphs"]
    lines = [f"  graphs: {len(gs)} ({sum(g['ops'] for g in gs)} ops) | rules: {manifest['rules']['count']} loaded, "
             f"{sum(1 for n in fired.values() if n)} fired"]
    left = manifest["rules"].get("left_out") or {}
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

"""One task count, named the same way in the progress lines and in the run summary: program tasks and sweep tasks, each a task."""
from __future__ import annotations

from eqsat_test.lowering.manifest import Graph, Manifest, ManifestRules
from eqsat_test.runners.cli.runlines import executed_lines, rules_lines, stages_line
from eqsat_test.runners.exec.progress import Progress


def test_progress_and_summary_count_the_same_tasks(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    bar = Progress(66, enabled=True, sweeps=33)
    for _ in range(66):
        bar.update({}, 0)
    bar.close()
    progress = capsys.readouterr().err.strip().splitlines()[-1]
    assert progress.startswith("eqsat-test: 66/66 tasks done (33 program tasks + 33 sweep tasks)")
    report = {"executed": 33, "variants": 32,
              "stats": {"tasks": 66, "program_tasks": 33, "sweep_tasks": 33, "tasks_done": 66, "tasks_not_started": 0,
                        "backends": ["inductor"], "devices": ["cpu"], "input_kinds": ["given"], "wall_seconds": 80.0}}
    (line,) = executed_lines(report)
    assert line.startswith("  executed: 66/66 tasks (33 program tasks + 33 sweep tasks): 32 variants + seeds")
    report["stats"].update(tasks_done=50, tasks_not_started=16)
    assert "50/66 tasks" in executed_lines(report)[0] and "16 not started (--time-budget spent)" in executed_lines(report)[0]


def test_rules_left_out_are_repeated_in_the_summary():
    manifest = Manifest(graphs=(Graph("g0", ops=5),), rules=ManifestRules(
        count=1, fired={"a": 2}, left_out={"times_two_is_three_adds": "claims exact, ..."}))
    lines = rules_lines(manifest)
    assert lines[0] == "  graphs: 1 (5 ops) | rules: 1 loaded, 1 fired"
    assert lines[1].startswith("  rules left out: times_two_is_three_adds: your rule(s) failing their quick check")


def test_the_stage_line_says_where_the_time_went():
    report = {"stats": {"timings": {"generate_wall": {"rules": 2.0, "saturate": 1.5}}, "program_tasks": 5,
                        "wall_seconds": 20.0, "exec_timings": {"compile": 3.0, "eager": 0.25, "load": 0.0},
                        "sweep": {"tasks": 5, "seconds": 12.0},
                        "confirm": {"checked": 2, "seconds": 1.5, "warm": 1, "fresh": 1,
                                    "proof": {"proven": 1, "not_reproduced": 0, "seconds": 6.0}},
                        "minimize": {"seconds": 2.0, "checks": 4}}}
    assert stages_line(report) == [
        "  time: generate 3.5 s | execute 20.0 s (5 program tasks: compile 3.0 s, eager 0.2 s; 5 sweep tasks: 12.0 s)"
        " | confirm 1.5 s (1 in a warm worker, 1 in a fresh process) | minimize 2.0 s (4 checks)"
        " | prove 6.0 s (1 fresh process)"]
    clean = {"stats": {"program_tasks": 3, "wall_seconds": 4.0, "exec_timings": {}, "minimize": {"checks": 0}}}
    assert stages_line(clean) == ["  time: execute 4.0 s (3 program tasks)"]

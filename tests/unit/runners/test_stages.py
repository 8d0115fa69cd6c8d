"""The run as a list of named stages (runners/pipeline.py STAGES): their order, the record each leaves, and the stage an interruption names."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import eqsat_test.runners.pipeline as P
from eqsat_test.runners.records import RunResults

NAMES = ["execute", "judge", "write", "confirm", "minimize", "prove", "perf", "report"]


def _ctx(tmp_path: Path, so_far: P.SoFar) -> P.RunContext:
    return P.RunContext(bundle=tmp_path / "bundle", out=tmp_path, opts=P.ExecOptions(), sweep=None, log=lambda s: None,
                        stream=P.VerdictStream(tmp_path / "verdicts.jsonl"), so_far=so_far, started=0.0)


def _recording(ran: list[str], so_far: P.SoFar, stop_at: str | None = None) -> list[P.Stage]:
    """STAGES with each stage's work replaced: it notes its name and the stage the run says it is in."""
    def work(stage: P.Stage):
        def run(ctx: P.RunContext, state: P.RunState) -> P.RunState:
            ran.append(f"{stage.name}: {so_far.stage}")
            if stage.name == stop_at:
                raise KeyboardInterrupt
            return dataclasses.replace(state, notes=[*state.notes, stage.name])  # (any list: counted)
        return run
    return [dataclasses.replace(s, run=work(s)) for s in P.STAGES]


def test_the_stages_run_in_their_named_order_and_each_leaves_its_record(tmp_path):
    assert [s.name for s in P.STAGES] == NAMES
    assert len({s.doing for s in P.STAGES}) == len(P.STAGES)  # an interruption names one stage
    so_far, ran = P.SoFar(), []
    state = P.run_stages(_recording(ran, so_far), _ctx(tmp_path, so_far), P.RunState(manifest=None))
    assert ran == [f"{s.name}: {s.doing}" for s in P.STAGES]
    assert list(state.stages) == NAMES
    for k, name in enumerate(NAMES, 1):
        record = state.stages[name]
        assert set(record) == {"seconds", "results", "findings", "notes"} and record["seconds"] >= 0
        assert record["notes"] == k  # the counts as the stage left them


def test_an_interruption_names_the_stage_it_came_in(tmp_path):
    so_far, ran = P.SoFar(), []
    with pytest.raises(KeyboardInterrupt):
        P.run_stages(_recording(ran, so_far, stop_at="confirm"), _ctx(tmp_path, so_far), P.RunState(manifest=None))
    assert [r.split(":")[0] for r in ran] == NAMES[:4]
    assert so_far.stage == "confirming the candidates"
    # after the verdicts' results.json: that one, marked partial, says the stage
    RunResults(report={"model": "m", "partial": False, "findings": [], "stats": {"tasks": 3}}, findings=(),
               raw=()).write(tmp_path)
    so_far.written = True
    line = P.save_partial(tmp_path, None, P.ExecOptions(), so_far)
    assert line.startswith("interrupted while confirming the candidates: every verdict is in"), line
    report = json.loads((tmp_path / "results.json").read_text())["report"]
    assert report["partial"] is True and report["stats"]["interrupted"] == {"stage": "confirming the candidates"}
    assert report["stats"]["tasks"] == 3


@pytest.mark.slow  # real workers
def test_a_real_run_records_its_stages_and_an_interrupted_one_names_its_stage(tmp_path, monkeypatch):
    from conftest import TEST_MODELS

    from eqsat_test.rewrite.generate import GenerateOptions, generate
    generate(TEST_MODELS / "relu_mlp.py", tmp_path / "bundle",
             GenerateOptions(variants=1, rules=(str(TEST_MODELS / "e2e_rules"),)))
    opts = P.ExecOptions(backends=('inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"',), jobs=1, timeout=240,
                         minimize=False, collect_env=False, progress=False, input_kinds=("given",), sweep=None)
    report = P.execute_bundle(tmp_path / "bundle", tmp_path / "done", dataclasses.replace(opts, confirm=False))
    st = report["stats"]
    assert list(st["stages"]) == NAMES[:-1]  # the last stage writes them
    assert st["wall_seconds"] == st["stages"]["execute"]["seconds"]
    assert st["minimize"] == {"seconds": st["stages"]["minimize"]["seconds"], "checks": 0}
    assert st["stages"]["execute"]["results"] == st["tasks_done"] and st["stages"]["write"]["findings"] >= 1

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(P, "confirm_all", interrupted)
    with pytest.raises(P.RunInterrupted) as e:
        P.execute_bundle(tmp_path / "bundle", tmp_path / "out", opts)
    assert e.value.saved.startswith("interrupted while confirming the candidates: every verdict is in")
    saved = json.loads((tmp_path / "out" / "results.json").read_text())["report"]
    assert saved["partial"] is True and saved["stats"]["interrupted"]["stage"] == "confirming the candidates"

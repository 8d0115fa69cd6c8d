"""The oracle's rule counts beyond one verdict: a worker's result carries them per input set, a run's report totals them, a campaign totals its runs'."""
from __future__ import annotations

import json

import torch

from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.runners.campaign.store import Store
from eqsat_test.runners.judging import write_results
from eqsat_test.runners.oracle.inputs import InputSet
from eqsat_test.runners.oracle.reference import eager_reference, judge_against
from eqsat_test.runners.records import Result


def _entry(name: str, got_of) -> dict:
    x = torch.linspace(-1, 1, 64)
    r = eager_reference(lambda t: (t * 3, (t > 0).sum()), lambda *a: {}, InputSet(name, (x,)))
    return {"name": name, **judge_against(r, got_of(r.ref)).to_dict()}  # as runners/worker.py writes it


def test_a_run_reports_its_oracle_rule_totals(tmp_path):
    same = lambda ref: ref  # noqa: E731
    off = lambda ref: (ref[0] * 1.01, ref[1] + 1)  # noqa: E731
    sets = [_entry("random-0", same), _entry("random-1", off)]
    assert sets[0]["rules"] == [] and sets[1]["rules"] == [{"leaf": "[0]", "counts": {"finite.bound": 64}},
                                                           {"leaf": "[1]", "counts": {"exact.differs": 1}}]
    raw = [Result.from_dict({"task": "t0", "variant": "g0_v001", "status": "ok", "input_sets": sets})]
    manifest = Manifest(model="m.py", variants=(Variant("g0_v001", "g0", "g0_v001.py"),))
    report = write_results(tmp_path, manifest, raw, [], [], {})
    assert report["stats"]["oracle_rules"] == {"exact.differs": 1, "finite.bound": 64}
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["raw"][0]["input_sets"][1]["rules"] == sets[1]["rules"]


def test_a_campaign_totals_its_runs_oracle_rules(tmp_path):
    with Store(tmp_path / "c.sqlite") as st:
        for i, rules in enumerate(({"finite.bound": 3, "bound.walk": 1}, {"bound.walk": 2}, {})):
            job = {"key": f"job{i}", "model": "m.py", "model_sha": "s", "rule_set": ["basic"], "rule_set_version": "v",
                   "backend": "inductor", "device": "cpu", "seed": i, "torch_version": "2.x", "options": {}}
            st.mark_running(job)
            st.record_job(job, {"status": "done", "exit_code": 0, "started": 1.0, "finished": 2.0,
                                "report": {"findings": [], "stats": {"oracle_rules": rules}}})
        assert st.oracle_rule_totals() == {"bound.walk": 3, "finite.bound": 3}

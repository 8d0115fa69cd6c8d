"""The same campaign on the local pool and on a real local Ray cluster gives the same store.
Skipped when Ray is not installed (`pip install 'eqsat-test[ray]'`)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import repo_env

ray = pytest.importorskip("ray")

from eqsat_test.runners.campaign.run import run_campaign  # noqa: E402
from eqsat_test.runners.campaign.spec import load_spec  # noqa: E402
from eqsat_test.runners.campaign.store import Store  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # a local Ray cluster: minutes on a small machine

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models" / "campaign"


def _spec(tmp_path: Path, models: list[str]) -> Path:
    p = tmp_path / "ray.toml"
    p.write_text("\n".join([
        'name = "ray"',
        f"models = {json.dumps([str(MODELS / m) for m in models])}",
        f"rule_sets = [[{json.dumps(str(MODELS / 'rules'))}]]",
        'backends = ["eager"]', "variants = 2", 'inputs = "given"',
        'run_args = ["--no-sweep", "--no-minimize", "--no-artifacts", "--allow-unsound-rules"]', "[budget]", "job_timeout = 600"]) + "\n")
    return p


def _snapshot(out: Path) -> dict:
    with Store(out / "campaign.sqlite") as st:
        assert st.check() == []
        return {"jobs": {j["key"]: (j["status"], j["variants"], j["executed"]) for j in st.jobs()},
                "findings": {f["signature"]: (f["kind"], f["count"], f["jobs"],
                                              sorted((s["job_key"], s["count"]) for s in f["sightings"]))
                             for f in st.findings()}}


def test_local_pool_and_local_ray_cluster_agree(tmp_path):
    spec = _spec(tmp_path, ["relu_chain.py", "abs_neg.py"])
    r = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "campaign", str(spec), "--json", "--jobs", "2",
                        "--out", str(tmp_path / "local")], capture_output=True, text=True, env=repo_env(), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    local = _snapshot(tmp_path / "local")

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        sp = load_spec(spec, {"executor": "ray"})
        summary = run_campaign(sp, tmp_path / "ray", as_json=True)
    finally:
        ray.shutdown()
    assert summary["run"]["ran"] == 2 and summary["jobs"] == {"total": 2, "done": 2}
    on_ray = _snapshot(tmp_path / "ray")
    assert on_ray == local and local["findings"]
    # The run folders came back from the workers, with paths pointing at their final place.
    for d in (tmp_path / "ray" / "runs").iterdir():
        if d.name.startswith("."):
            continue
        rep = json.loads((d / "report.json").read_text())
        for f in rep["findings"]:
            if f.get("repro"):
                assert Path(f["repro"]).is_file()
        assert "eqsat-job-" not in (d / "report.json").read_text()


def test_cli_ray_executor_starts_a_local_cluster(tmp_path):
    spec = _spec(tmp_path, ["relu_chain.py"])
    r = subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", "campaign", str(spec), "--json", "--executor", "ray",
                        "--address", "local", "--jobs", "1", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, env=repo_env(), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    s = json.loads(r.stdout)
    assert s["jobs"] == {"total": 1, "done": 1}
    with Store(tmp_path / "out" / "campaign.sqlite") as st:
        assert [j["host"] for j in st.jobs()] != [None]

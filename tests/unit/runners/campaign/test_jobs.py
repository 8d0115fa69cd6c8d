"""A campaign job's command (runners/campaign/jobs.py): its run has a time budget that ends inside the job's timeout."""
from __future__ import annotations

from pathlib import Path

from eqsat_test.runners.campaign.jobs import JOB_MARGIN, job_budget, job_command


def _job(timeout: float, variant_timeout: float, run_args=()) -> dict:
    return {"model": "m.py", "variants": 8, "seed": 0, "backend": "inductor", "device": "cpu", "inputs": "given",
            "timeout": timeout, "variant_timeout": variant_timeout, "rule_args": [], "run_args": list(run_args)}


def test_a_jobs_run_stops_starting_work_a_variant_timeout_before_its_kill():
    # the corpus campaigns: 600 s a job, 120 s a variant -> no task, confirmation or minimizing starts after 450 s
    assert job_budget(_job(600, 120)) == 600 - 120 - JOB_MARGIN == 450
    cmd = job_command(_job(600, 120), Path("/tmp/run"))
    assert cmd[cmd.index("--time-budget") + 1] == "450"
    # a timeout hardly longer than a variant's: half of it
    assert job_budget(_job(25, 120)) == 12.5
    # the spec's own run_args come last: a --time-budget there wins (click keeps an option's last value)
    cmd = job_command(_job(600, 120, ["--time-budget", "100"]), Path("/tmp/run"))
    assert cmd[-2:] == ["--time-budget", "100"]


def test_a_campaigns_backend_file_is_found_beside_its_spec(tmp_path, monkeypatch):
    """`backends = ["mine/plant.py:fn"]` names a file relative to the spec (else the working folder): jobs, which run
    in their own folders, get its absolute path."""
    from eqsat_test.runners.campaign.spec import load_spec
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.py").write_text("import torch\nmodel = torch.nn.ReLU()\nexample_inputs = (torch.ones(2),)\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "plant.py").write_text("def fn(gm, example_inputs):\n    return gm\n")
    (tmp_path / "c.toml").write_text('models = ["models/m.py"]\nbackends = ["inductor", "mine/plant.py:fn"]\n')
    monkeypatch.chdir(tmp_path / "models")
    spec = load_spec(tmp_path / "c.toml")
    assert spec.backends == ["inductor", f"{tmp_path / 'mine' / 'plant.py'}:fn"]


def test_a_cpu_job_sees_no_gpu_and_a_cuda_job_sees_its_own(tmp_path, monkeypatch):
    """A cpu job of a cpu + cuda campaign gets CUDA_VISIBLE_DEVICES="" (no CUDA context of its on the campaign's
    GPUs); a cuda job the GPU it was given; with none given it keeps the campaign's."""
    from eqsat_test.runners.campaign.jobs import job_env
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert job_env("t", "c", tmp_path, 1, "cpu")["CUDA_VISIBLE_DEVICES"] == ""
    assert job_env("t", "c", tmp_path, 1, "cuda", gpu="1")["CUDA_VISIBLE_DEVICES"] == "1"
    assert job_env("t", "c", tmp_path, 1, "cuda")["CUDA_VISIBLE_DEVICES"] == "0,1"

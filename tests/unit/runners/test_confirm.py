"""Confirm before claiming: how a finding's lone repro.py run decides confirmed / flaky / resource."""
from __future__ import annotations

import pytest

from eqsat_test.runners.findings.confirm import OtherLoad, loaded, outcome, unconfirmed_timeouts


def _r(rc=1, verdict="MISCOMPILE", timed_out=False, eager=0.01, seconds=3.0):
    return {"rc": rc, "verdict": verdict, "timed_out": timed_out, "eager_seconds": eager, "seconds": seconds,
            "output": ""}


def test_miscompile_confirmed_only_by_its_own_verdict():
    f = {"kind": "miscompile"}
    assert outcome(f, _r(), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=0, verdict="OK"), 60)[0] == "flaky"
    assert outcome(f, _r(rc=1, verdict="CRASH"), 60)[0] == "flaky"
    assert outcome(f, _r(rc=0, verdict="NONDETERMINISTIC"), 60)[0] == "flaky"


def test_crashes_confirmed_by_a_crash_verdict_or_a_signal_after_eager():
    f = {"kind": "compile-crash"}
    assert outcome(f, _r(verdict="CRASH"), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=-11, verdict=None), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=-11, verdict=None, eager=None), 60)[0] == "flaky"  # died before eager finished
    assert outcome(f, _r(rc=0, verdict="OK"), 60)[0] == "flaky"


def test_a_timeout_is_a_compiler_bug_only_when_compile_hangs_while_eager_is_fast():
    f = {"kind": "timeout"}
    assert outcome(f, _r(rc=None, verdict=None, timed_out=True, eager=0.5), 60)[0] == "confirmed"
    assert outcome(f, _r(rc=None, verdict=None, timed_out=True, eager=30.0), 60)[0] == "resource"
    assert outcome(f, _r(rc=None, verdict=None, timed_out=True, eager=None), 60)[0] == "resource"
    assert outcome(f, _r(rc=0, verdict="OK", seconds=20.0), 60)[0] == "resource"


def test_a_timeout_re_run_on_a_loaded_machine_is_load_not_a_hang():
    """Alone means alone: a timeout that hangs again while other work keeps over half the cores busy (a
    campaign's other jobs) is a resource note, however fast eager ran; the same on an idle machine is claimed."""
    import os
    f = {"kind": "timeout"}
    cores = os.cpu_count() or 1
    busy = _r(rc=None, verdict=None, timed_out=True, eager=0.5)
    assert outcome(f, {**busy, "load": 0.0}, 60)[0] == "confirmed"
    kind, why = outcome(f, {**busy, "load": 0.9 * cores}, 60)
    assert kind == "resource" and "loaded" in why
    assert loaded(0.9 * cores) and not loaded(0.1 * cores)
    # load does not turn other verdicts: a miscompile reproduces or not whatever the load
    assert outcome({"kind": "miscompile"}, {**_r(), "load": 0.9 * cores}, 60)[0] == "confirmed"


def test_other_load_counts_busy_processes_that_are_not_ours_to_wait_for():
    """OtherLoad: the machine's busy CPU time, less our finished children's, per wall second."""
    import subprocess
    import sys
    import time
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        meter = OtherLoad()
        time.sleep(1.5)
        seen = meter.cores()
    finally:
        hog.kill()
        hog.wait()
    assert seen >= 0.3, seen  # (a shared machine may give the hog less than a whole core)


def test_timeouts_not_re_run_alone_are_resource_notes(tmp_path):
    """--no-confirm, or a time budget spent before confirming: a timeout is never claimed without a lone re-run."""
    import time

    from eqsat_test.runners.findings.confirm import confirm_all
    written = [{"id": "001-timeout-g0_v001", "kind": "timeout", "detail": "no result within 60 s (during compile)"},
               {"id": "002-miscompile-g0_v002", "kind": "miscompile"}]
    written, n = unconfirmed_timeouts(written)
    assert n == 1
    assert written[0].kind == "resource" and written[0].claimed_kind == "timeout"
    assert written[1].kind == "miscompile"
    f = {"id": "003-timeout-g0_v003", "kind": "timeout"}
    (tmp_path / "findings" / f["id"]).mkdir(parents=True)
    [f], stats = confirm_all([f], tmp_path, timeout=60, deadline=time.monotonic() - 1)
    assert f.kind == "resource" and f.confirmed is False and stats["resource"] == 1


def test_no_confirmation_starts_after_the_deadline(tmp_path):
    """A run's --time-budget holds for confirming too: past it, a candidate stays unconfirmed (None), unrun."""
    import time

    from eqsat_test.runners.findings.confirm import confirm_all
    folder = tmp_path / "findings" / "001-miscompile-g0_v001"
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\nraise SystemExit(1)\n")
    f = {"id": "001-miscompile-g0_v001", "kind": "miscompile"}
    [f], stats = confirm_all([f], tmp_path, timeout=60, deadline=time.monotonic() - 1)
    assert stats["skipped"] == 1 and stats["checked"] == 0 and f.confirmed is None
    assert not (tmp_path / "ran").exists()


@pytest.mark.slow  # real workers
def test_a_runs_time_budget_reaches_its_confirmation(tmp_path, monkeypatch):
    """execute_bundle hands its deadline (--time-budget) to confirm_all: a run slowed by load stops confirming
    at its budget and reports its verdicts (a campaign job's budget ends inside its timeout: jobs.job_budget)."""
    import time

    from conftest import TEST_MODELS

    import eqsat_test.runners.pipeline as P
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    generate(TEST_MODELS / "relu_mlp.py", tmp_path / "bundle",
             GenerateOptions(variants=1, rules=(str(TEST_MODELS / "e2e_rules"),)))
    seen = {}

    def confirm_all(written, out, *, timeout, jobs=1, deadline=None, log=None, **_):
        seen["deadline"] = deadline
        return written, {"checked": 0, "skipped": len(written)}
    monkeypatch.setattr(P, "confirm_all", confirm_all)
    opts = P.ExecOptions(backends=('inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"',), jobs=1, timeout=240,
                         minimize=False, collect_env=False, progress=False, time_budget=900, input_kinds=("given",))
    t0 = time.monotonic()
    report = P.execute_bundle(tmp_path / "bundle", tmp_path / "out", opts)
    assert report["stats"]["compiler_bugs"] >= 1
    assert seen["deadline"] is not None and abs(seen["deadline"] - (t0 + 900)) < 60


def test_a_sweep_timeout_is_re_run_as_its_own_task_alone(tmp_path, monkeypatch):
    """A sweep task's repro.py holds the model's own inputs, not the swept ones that hung: its timeout is re-run as
    the sweep task itself, on one fresh worker; finished alone, it was load (a resource note), never a bug."""
    import eqsat_test.runners.findings.confirm as C
    seen = {}

    def rerun(f, tasks, timeout, env=None):
        seen["task"] = tasks[0]["id"]
        return {"rc": 0, "seconds": 3.0, "timed_out": False, "eager_seconds": None, "verdict": None, "output": "",
                "load": 0.0}
    monkeypatch.setattr(C, "rerun_sweep_alone", rerun)
    monkeypatch.setattr(C, "run_repro", lambda *a, **k: (_ for _ in ()).throw(AssertionError("repro.py run")))
    f = {"id": "001-timeout-g0_seed", "kind": "timeout", "sweep": "sweeps(dtype=float16)", "variant": "g0_seed",
         "backend": "inductor", "device": "cpu"}
    (tmp_path / "findings" / f["id"]).mkdir(parents=True)
    tasks = [{"id": "g0_seed@inductor@cpu#sweep", "variant": "g0_seed", "backend": "inductor", "device": "cpu"}]
    [f], stats = C.confirm_all([f], tmp_path, timeout=150, tasks=tasks)
    assert seen["task"] == tasks[0]["id"]
    assert f.kind == "resource" and "finished" in f.confirmation["why"] and stats["resource"] == 1


def test_a_timeout_is_re_run_alone_with_several_times_its_limit(tmp_path, monkeypatch):
    """A big graph compiling slowly is no hang: the lone re-run gets HANG_FACTOR times the limit, and a compile that
    finishes within it is a resource note; one that runs past it while eager was fast is claimed. Where the time
    budget left is shorter than that, nothing is claimed."""
    import time

    import eqsat_test.runners.findings.confirm as C
    limits = []

    def repro(folder, timeout, threads=1, finish_in=None):
        limits.append(timeout)
        if finish_in is not None and finish_in < timeout:
            return {"rc": 0, "seconds": finish_in, "timed_out": False, "eager_seconds": 0.1, "verdict": "OK",
                    "output": "", "load": 0.0}
        return {"rc": None, "seconds": timeout, "timed_out": True, "eager_seconds": 0.1, "verdict": None,
                "output": "", "load": 0.0}

    def finding():
        f = {"id": "001-timeout-g0_v001", "kind": "timeout", "variant": "g0_v001", "backend": "inductor",
             "device": "cpu", "detail": "no result within 150 s (during compile)"}
        (tmp_path / "findings" / f["id"]).mkdir(parents=True, exist_ok=True)
        return f

    monkeypatch.setattr(C, "run_repro", lambda folder, timeout, threads=1: repro(folder, timeout, threads, 400.0))
    [f], stats = C.confirm_all([finding()], tmp_path, timeout=150)
    assert limits == [C.HANG_FACTOR * 150] and f.kind == "resource" and "finished in 400" in f.confirmation["why"]
    monkeypatch.setattr(C, "run_repro", lambda folder, timeout, threads=1: repro(folder, timeout, threads))
    [f], stats = C.confirm_all([finding()], tmp_path, timeout=150)
    assert f.kind == "timeout" and f.confirmed and str(int(C.HANG_FACTOR * 150)) in f.confirmation["why"]
    limits.clear()
    [f], stats = C.confirm_all([finding()], tmp_path, timeout=150, deadline=time.monotonic() + 300)
    assert limits == [] and f.kind == "resource" and "time budget left" in f.detail and stats["resource"] == 1


# ----------------------------------------------------------------------------------------------
# warm first, a fresh process where needed, and the proof at the end


def _folder(root, fid: str, script: str):
    d = root / "findings" / fid
    d.mkdir(parents=True, exist_ok=True)
    (d / "repro.py").write_text(script)
    return d


# reproduces (exit 1, a miscompile verdict) only where the process is one of eqsat-test's warm workers
ONLY_WARM = ("import sys\nprint('eager: ran twice in 0.010 s')\n"
             "warm = 'eqsat_test.runners.exec.alone' in sys.modules\n"
             "print('VERDICT: MISCOMPILE (eager and compiled disagree)' if warm else 'VERDICT: OK (eager and compiled agree)')\n"
             "raise SystemExit(1 if warm else 0)\n")
ONLY_FRESH = ONLY_WARM.replace("warm = 'eqsat", "warm = not 'eqsat")
ALWAYS = "print('eager: ran twice in 0.010 s')\nprint('VERDICT: MISCOMPILE (x)')\nraise SystemExit(1)\n"
NEVER = "print('eager: ran twice in 0.010 s')\nprint('VERDICT: OK (eager and compiled agree)')\n"


def test_process_crashes_and_stateful_crashes_are_confirmed_in_a_fresh_process():
    from eqsat_test.runners.findings.confirm import needs_fresh
    from eqsat_test.runners.records import as_finding
    assert needs_fresh(as_finding({"kind": "miscompile"})) is None
    assert needs_fresh(as_finding({"kind": "compile-crash", "error": {"type": "LoweringException",
                                                                     "message": "no lowering for aten.foo"}})) is None
    assert needs_fresh(as_finding({"kind": "run-crash", "error": {"type": "ProcessCrash",
                                                                  "message": "worker died with signal 11"}}))
    for message in ("FileNotFoundError: [Errno 2] No such file or directory: '/tmp/torchinductor/x.so'",
                    "CUDA error: an illegal memory access was encountered", "the FX graph cache is locked"):
        assert needs_fresh(as_finding({"kind": "run-crash", "error": {"type": "RuntimeError", "message": message}}))
    assert needs_fresh(as_finding({"kind": "compile-crash", "error": {"type": "AssertionError",
                                                                     "message": "BLOCK size must divide"}})) is None


def test_a_repro_runs_in_process_as_python_runs_it(tmp_path):
    """run_repro_alone: `__main__`, its folder as working directory, the exit code python would give and the
    output; an exception out of the script is exit 1 with its traceback."""
    from eqsat_test.runners.exec.alone import run_repro_alone
    d = _folder(tmp_path, "a", "import os, sys\nprint('cwd', os.path.basename(os.getcwd()), __name__)\n"
                "print('to stderr', file=sys.stderr)\nraise SystemExit(3)\n")
    assert run_repro_alone(d) == (3, "cwd a __main__\nto stderr\n")
    _folder(tmp_path, "b", "raise ValueError('boom')\n")
    rc, out = run_repro_alone(tmp_path / "findings" / "b")
    assert rc == 1 and "ValueError: boom" in out and "Traceback" in out
    _folder(tmp_path, "c", "import sys\nsys.exit('bad input')\n")
    assert run_repro_alone(tmp_path / "findings" / "c") == (1, "bad input\n")


def test_fresh_compile_state_turns_the_caches_off_and_puts_the_process_back():
    """What a repro sets (Inductor config, environment, default dtype, grad mode) is undone after it: the next task
    in the worker starts as it would have; inside, Inductor's FX graph and AOTAutograd caches are off."""
    import os

    import torch
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    from eqsat_test.runners.exec.alone import fresh_compile_state
    before = (inductor_config.fx_graph_cache, inductor_config.max_autotune, torch.get_default_dtype(),
              torch.is_grad_enabled(), os.environ.get("EQSAT_STATE_TEST"), os.getcwd())
    with fresh_compile_state():
        assert inductor_config.fx_graph_cache is False and functorch_config.enable_autograd_cache is False
        inductor_config.max_autotune = not before[1]
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(False)
        os.environ["EQSAT_STATE_TEST"] = "1"
        os.chdir("/")
    assert (inductor_config.fx_graph_cache, inductor_config.max_autotune, torch.get_default_dtype(),
            torch.is_grad_enabled(), os.environ.get("EQSAT_STATE_TEST"), os.getcwd()) == before


def test_the_proof_runs_one_repro_per_root_cause_and_falls_back_to_the_next_member(tmp_path):
    """prove_all: the representative's repro.py in a fresh process; one that does not reproduce there is a flaky
    note and the next member is proven instead; the members not run say whose proof stands for them."""
    from types import SimpleNamespace

    from eqsat_test.runners.findings.confirm import prove_all
    for fid, script in (("001-seed-miscompile-g0_seed", NEVER), ("002-miscompile-g0_v001", ALWAYS),
                        ("003-miscompile-g0_v002", ALWAYS), ("004-miscompile-g0_v003", ALWAYS)):
        _folder(tmp_path, fid, script)
    found = [{"id": "001-seed-miscompile-g0_seed", "kind": "seed-miscompile", "cluster": "A", "confirmed": True},
             {"id": "002-miscompile-g0_v001", "kind": "miscompile", "cluster": "A", "confirmed": True},
             {"id": "003-miscompile-g0_v002", "kind": "miscompile", "cluster": "A", "confirmed": True},
             {"id": "004-miscompile-g0_v003", "kind": "miscompile", "cluster": "B", "confirmed": True}]
    clusters = [SimpleNamespace(key="A", representative="001-seed-miscompile-g0_seed"),
                SimpleNamespace(key="B", representative="004-miscompile-g0_v003")]
    out, stats = prove_all(found, clusters, tmp_path, timeout=60, jobs=2)
    assert [f.kind for f in out] == ["flaky", "miscompile", "miscompile", "miscompile"]
    assert out[0].claimed_kind == "seed-miscompile" and "fresh process" in out[0].detail
    assert [f.confirmation["proof"]["outcome"] for f in out] == ["flaky", "confirmed", "not run", "confirmed"]
    assert "002-miscompile-g0_v001" in out[2].confirmation["proof"]["why"]
    assert stats["proven"] == 2 and stats["not_reproduced"] == 1 and stats["skipped"] == 1


@pytest.mark.slow  # a real warm worker
def test_warm_first_fresh_where_needed_and_flaky_findings_still_caught(tmp_path):
    """A finding that reproduces only in a warm worker is confirmed there, then fails its proof in a fresh process:
    a flaky note. One that does not reproduce warm is re-run in a fresh process, which confirms it (and stands as
    its proof). A process crash goes to a fresh process at once."""
    from types import SimpleNamespace

    from eqsat_test.runners.exec.pool import retire
    from eqsat_test.runners.findings.confirm import FRESH, WARM, confirm_all, prove_all
    crash = ("import os, signal\nprint('eager: ran twice in 0.010 s', flush=True)\n"
             "os.kill(os.getpid(), signal.SIGSEGV)\n")
    for fid, script in (("001-miscompile-g0_v001", ONLY_WARM), ("002-miscompile-g0_v002", ONLY_FRESH),
                        ("003-run-crash-g0_v003", crash)):
        _folder(tmp_path, fid, script)
    written = [{"id": "001-miscompile-g0_v001", "kind": "miscompile", "detail": "d1"},
               {"id": "002-miscompile-g0_v002", "kind": "miscompile", "detail": "d2"},
               {"id": "003-run-crash-g0_v003", "kind": "run-crash",
                "error": {"type": "ProcessCrash", "message": "worker died with signal 11 during run"}}]
    try:
        out, stats = confirm_all(written, tmp_path, timeout=120, jobs=1)
    finally:
        retire()
    assert [f.confirmed for f in out] == [True, True, True], [f.confirmation for f in out]
    assert [f.confirmation["where"] for f in out] == [WARM, FRESH, FRESH]
    assert "warm worker" in out[1].confirmation["warm_attempt"] and "warm_attempt" not in out[2].confirmation
    assert stats["warm"] == 1 and stats["fresh"] == 2
    clusters = [SimpleNamespace(key=str(f.id), representative=f.id) for f in out]
    proven, pstats = prove_all([f.with_(cluster=f.id) for f in out], clusters, tmp_path, timeout=120, jobs=1)
    assert [f.kind for f in proven] == ["flaky", "miscompile", "run-crash"]
    assert proven[0].claimed_kind == "miscompile" and proven[0].confirmed is False
    assert pstats["already"] == 2 and pstats["not_reproduced"] == 1


@pytest.mark.slow  # a prover server (imports torch)
def test_a_prover_child_is_a_fresh_process_that_has_run_nothing(tmp_path):
    """runners/exec/prover.py: each repro.py runs in a child of its own (its pid, its folder, its exit status or
    signal) that starts with torch imported and nothing of eqsat-test; one that runs past its limit is killed."""
    import os

    from eqsat_test.runners.exec.prover import Prover
    probe = _folder(tmp_path, "a", "import os, sys\nours = [m for m in sys.modules if m.startswith('eqsat_test')]\n"
                    "print(os.getpid(), os.path.basename(os.getcwd()), 'torch' in sys.modules, ours, __name__)\n"
                    "raise SystemExit(5)\n")
    dies = _folder(tmp_path, "b", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    hangs = _folder(tmp_path, "c", "import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    p = Prover(threads=1)
    try:
        r1, r2 = p.run(probe, 60), p.run(probe, 60)
        assert r1["rc"] == 5 and r1["output"].split()[1:] == ["a", "True", "[]", "__main__"], r1
        assert r1["output"].split()[0] != r2["output"].split()[0] != str(os.getpid())  # a process each
        assert p.run(dies, 60)["rc"] == -11
        slow = p.run(hangs, 1.0)
        assert slow["timed_out"] and slow["rc"] is None and "started" in slow["output"]
        assert p.alive()
    finally:
        p.kill()


@pytest.mark.slow  # a prover server (imports torch)
def test_a_prestarted_prover_serves_every_proof_of_the_run_and_retire_ends_it(tmp_path):
    """prover.prestart starts the server in the background (a second call while it starts or lives starts no
    other); server() waits for it and hands the same one to every proof, which run side by side; retire() ends
    it."""
    import threading

    from eqsat_test.runners.exec import prover
    prover.retire()  # a prover an earlier test of this worker left
    prover.prestart(1)
    prover.prestart(1)
    p = prover.server(1)
    try:
        assert p.alive() and not prover._starting and prover.server(1) is p
        prover.prestart(1)  # one is live: nothing new starts
        assert not prover._starting and prover._servers == {1: p}
        # each proof waits until all three have started: one after another, the first would never see the others
        meet = tmp_path / "meet"
        meet.mkdir()
        waits = (f"import os, time\nopen({str(meet)!r} + '/' + os.path.basename(os.getcwd()), 'w').close()\n"
                 f"t = time.monotonic()\nwhile len(os.listdir({str(meet)!r})) < 3 and time.monotonic() - t < 30:\n"
                 f"    time.sleep(0.05)\nprint('met', len(os.listdir({str(meet)!r})))\n")
        folders = [_folder(tmp_path, f"s{k}", waits) for k in range(3)]
        got: list = []
        threads = [threading.Thread(target=lambda d=d: got.append(prover.server(1).run(d, 60))) for d in folders]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert [(g["rc"], g["output"].split()) for g in got] == [(0, ["met", "3"])] * 3, got
    finally:
        prover.retire()
    assert not p.alive() and not prover._servers


def test_a_finding_on_a_gpu_is_proven_in_a_new_interpreter_not_a_fork(tmp_path, monkeypatch):
    """A child forked from the prover cannot initialise CUDA once the prover's imports touched it ("Cannot
    re-initialize CUDA in forked subprocess": every cuda proof came back exit 1 with no verdict, a flaky note):
    fresh_repro runs a cuda finding's repro.py as `python repro.py`, a cpu finding's through the prover."""
    from eqsat_test.runners.exec import prover
    from eqsat_test.runners.findings import confirm
    d = _folder(tmp_path, "a", ALWAYS)
    took = []
    monkeypatch.setattr(prover, "server", lambda threads: took.append(threads) or (_ for _ in ()).throw(OSError("none")))
    r = confirm.fresh_repro(d, 60, 1, "cuda")
    assert r["rc"] == 1 and "VERDICT: MISCOMPILE" in r["output"] and took == []
    confirm.fresh_repro(d, 60, 1, "cpu")
    assert took == [1]  # a cpu finding asks the prover first

"""Tests of `eqsat-test report`: the HTML of a campaign store and of a run folder, rendered in a real
headless browser (Debian's `chromium`; skipped when it is not installed)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import warm_server

from eqsat_test.runners.campaign.report import build_view, collect, write_report
from eqsat_test.runners.campaign.store import Store
from eqsat_test.runners.findings.write import signature

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "tests" / "models" / "campaign"
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

REPRO = '''import torch
# a repro with characters HTML must escape: <script>alert("x")</script> & more
def forward(x):
    return torch.relu(x) * 2.0
print("verdict: MISMATCH")
'''


def make_campaign(out: Path) -> dict:
    """A campaign folder with a store holding a compiler bug (with repro), notes and a timed-out job."""
    runs = out / "runs"
    bug = {"kind": "miscompile", "backend": "inductor", "device": "cpu", "ops": ["torch.relu", "operator.mul"],
           "min_ops": ["torch.relu"], "rules": ["mul_spelling", "relu_twice"], "variant": "g0_v001", "max_abs_err": 0.25,
           "detail": "[0] float32[4]: 1 of 4 elements differ", "input_set": "special-0"}
    crash = {"kind": "compile-crash", "backend": "inductor", "device": "cpu", "ops": ["torch.cumsum"],
             "rules": [], "variant": "g0_seed", "seed": True, "error": {"type": "LoweringException"},
             "detail": "LoweringException: cumsum of bool"}
    note = {"kind": "unsound-rewrite", "backend": "inductor", "device": "cpu",
            "ops": ["torch.exp", "torch.nn.functional.scaled_dot_product_attention"],
            "rules": ["exp_wrong"], "variant": "g0_v002",
            "detail": "[0] float32[4]: first at [2]: eager -inf, compiled nan (compiled is non-finite where eager is finite)"}
    sigs = {}
    with Store(out / "campaign.sqlite") as st:
        st.set_meta(name="synthetic")
        # planned: the four jobs below and two more models never started (a budget stopped the campaign)
        st.set_plan([{"key": k, "model": f"/models/{m}", "rule_label": "basic", "backend": "inductor", "device": "cpu",
                      "seed": 0} for k, m in [("k0", "a.py"), ("k1", "b.py"), ("k2", "c.py"), ("k9", "slow.py"),
                                              ("k10", "later1.py"), ("k11", "later2.py")]])
        for i, (model, fs) in enumerate([("a.py", [bug, note]), ("b.py", [bug, crash]), ("c.py", [note])]):
            rd = runs / f"{model[:-3]}-{i:012d}"
            recs = []
            for k, f in enumerate(fs):
                f = dict(f)
                if f["kind"] != "unsound-rewrite":
                    d = rd / "findings" / f"{k + 1:03d}-{f['kind']}-{f['variant']}"
                    d.mkdir(parents=True)
                    (d / "repro.py").write_text(REPRO)
                    f["repro"] = str(d / "repro.py")
                (rd / "bundle").mkdir(parents=True, exist_ok=True)
                (rd / "bundle" / f"{f['variant']}.py").write_text("def forward(x):\n    return x\n")
                f["signature"] = signature(f)
                sigs[f["kind"]] = f["signature"]
                recs.append(f)
            job = {"key": f"k{i}", "model": f"/models/{model}", "rule_set": ["basic"], "backend": "inductor",
                   "device": "cpu", "seed": 0}
            t = 1_700_000_000.0 + 40 * i
            st.record_job(job, {"status": "done", "exit_code": 1, "started": t, "finished": t + 30,
                                "run_dir": str(rd), "report": {"variants": 8, "executed": 9, "findings": recs,
                                                               "torch_version": "2.13.0"},
                                "rules": {"names": ["mul_spelling", "relu_twice", "exp_wrong", "never_used"],
                                          "families": {"mul_spelling": "spelling", "relu_twice": "activation",
                                                       "exp_wrong": "algebra", "never_used": "layout"},
                                          "fired": {"mul_spelling": 3, "relu_twice": 1, "exp_wrong": 2}}})
        st.record_job({"key": "k9", "model": "/models/slow.py", "rule_set": [], "backend": "inductor",
                       "device": "cpu", "seed": 0},
                      {"status": "timeout", "started": 1_700_000_000.0, "finished": 1_700_000_100.0, "report": None,
                       "error": "no result within the job timeout of 100 s\n...", "run_dir": str(runs / "slow")})
    return sigs


def test_campaign_report_content(tmp_path):
    out = tmp_path / "camp"
    sigs = make_campaign(out)
    data = collect(out)
    assert data["kind"] == "campaign" and len(data["jobs"]) == 4
    view = build_view(data, out / "report.html")
    cards = {c["kind"]: c for c in view["cards"]}
    assert cards["miscompile"]["count"] == 2 and cards["miscompile"]["jobs"] == 2 and cards["miscompile"]["bug"]
    assert not cards["unsound-rewrite"]["bug"] and cards["unsound-rewrite"]["code"]  # notes show the variant
    assert [c["kind"] for c in view["cards"]][:2] == ["miscompile", "compile-crash"]  # bugs first, by count
    assert [r["name"] for r in view["never_fired"]] == ["never_used"]
    fam = next(c for c in view["charts"] if c["title"] == "Findings per rule family")
    assert {b["full"] for b in fam["bars"]} == {"spelling", "activation", "algebra", "(none: seed program)"}
    tc = view["time_chart"]  # cumulative: one rising step per finished job, never back to zero
    assert not tc["empty"] and len(tc["points"]) == 3 and tc["peak"] == 2
    ys = [pt["y"] for pt in tc["points"]]
    assert ys == sorted(ys, reverse=True) and "24 variants in 3 jobs" in tc["note"]
    assert [j["status"] for j in view["failed"]] == ["timeout"]
    # the plan: 6 jobs, 4 finished, 2 left; 6 models of which 4 are done
    tiles = dict(view["summary"])
    assert tiles["jobs finished"] == "4 / 6 planned, 2 left" and tiles["models"].startswith("4 / 6 planned done")
    # jobs ran 0-100 s (the timeout), 0-30, 40-70, 80-110: 110 s with jobs running
    assert tiles["wall time"] == "1.8 min with jobs running"
    assert sorted(j["model"] for j in view["left_jobs"]) == ["later1.py", "later2.py"]
    # root causes first: the minimized relu of a.py and b.py is one, the seed's cumsum crash another
    assert tiles["distinct root causes"] == "2 (exposed only by rewrites: 1 of 2)"
    roots = {r["pattern"]: r for r in view["root_causes"]}
    assert set(roots) == {"relu", "cumsum"} and roots["relu"]["count"] == 2 and roots["relu"]["jobs"] == 2
    assert roots["relu"]["models"] == ["a.py", "b.py"] and not roots["relu"]["seed_fails"]
    assert roots["cumsum"]["seed_fails"] and not roots["cumsum"]["minimized"]
    pat = next(c for c in view["charts"] if c["title"] == "Root causes per op pattern")
    assert {b["full"]: b["total"] for b in pat["bars"]} == {"relu": 1, "cumsum *": 1}
    # notes: one line per model and cause
    assert [(n["model"], n["cause"], n["count"]) for n in view["note_rows"]] == [("a.py", "exp_wrong", 1),
                                                                               ("c.py", "exp_wrong", 1)]
    # unsound-rewrite notes compare two eager runs, and say so
    assert cards["unsound-rewrite"]["detail"] == ("[0] float32[4]: first at [2]: seed eager -inf, variant eager nan "
                                                 "(variant eager is non-finite where seed eager is finite)")

    path = write_report(out)
    html = path.read_text()
    for s in sigs.values():
        assert f'id="sig-{s}"' in html
    assert html.count("<svg") >= 7
    assert "&lt;script&gt;alert(" in html and "<script>" not in html  # escaped, and no scripts at all
    assert 'href="runs/a-000000000000/findings/001-miscompile-g0_v001/repro.py"' in html  # relative links
    assert not re.search(r'(src|href)="(https?:)?//', html)  # self-contained: nothing from a network
    assert "never_used" in html and "no result within the job timeout" in html
    assert "Root causes (2)" in html and "Notes by cause (2)" in html and "exposed only by rewrites" in html
    assert html.index("Root causes (2)") < html.index("Findings by signature")
    # the rules that never fired: collapsed under their count, not a wall of names
    assert re.search(r'<details id="never-fired">\s*<summary>Rules that never fired: 1 of 4 loaded \(layout 1\)', html)
    assert "seed eager vs variant eager" in html and "eager -inf, compiled nan" not in html
    assert "Jobs not finished yet (2)" in html and "later1.py" in html


def test_report_cli_on_a_run_folder_and_errors(tmp_path):
    run = tmp_path / "run"
    r = warm_server().run(["run", MODELS / "relu_chain.py", "-n", "2", "-b", "eager", "-r", MODELS / "rules",
                           "--jobs", "1", "--inputs", "given", "--no-sweep", "--no-minimize", "--no-artifacts",
                           "--allow-unsound-rules",  # the wrong rules' unsound-rewrite notes are part of the report
                           "--out", run, "--json"], cli=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    r = warm_server().run(["report", run], cli=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(run / "report.html")
    html = (run / "report.html").read_text()
    assert "unsound-rewrite" in html and "test_never_fires" in html and "<svg" in html
    assert "relu_chain.py" in html
    empty = tmp_path / "empty"
    empty.mkdir()
    r = warm_server().run(["report", empty], cli=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 4 and "neither a campaign folder" in r.stderr


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(tmp_path):
    out = tmp_path / "camp"
    sigs = make_campaign(out)
    path = write_report(out)
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(base + ["--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert sigs["miscompile"] in dom.stdout and "<svg" in dom.stdout
    assert "Findings per rule family" in dom.stdout and "never_used" in dom.stdout
    shot = tmp_path / "report.png"
    r = subprocess.run(base + ["--window-size=1400,2000", f"--screenshot={shot}", path.as_uri()],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000  # a page, not a blank frame
    keep = os.environ.get("EQSAT_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_bar_labels_are_shortened_smartly_and_whole_in_the_tooltip():
    from eqsat_test.runners.campaign.report import LABEL_CHARS, hbar_chart, short_label
    assert short_label("torch.relu") == "torch.relu"
    assert short_label("torch.nn.functional.scaled_dot_product_attention") == "F.scaled_dot_product_attention"
    assert short_label("torch.nn.functional.binary_cross_entropy_with_logits") == "F.binary_cross_entropy_with_log…"
    assert short_label("torch.ops.aten.native_layer_norm.default") == "aten.native_layer_norm.default"
    assert short_label("torch.ops.aten.native_layer_norm_backward.default") == "aten.native_layer_norm_backward"
    assert short_label("my.very.long.package.path.with.parts.my_function") == "…path.with.parts.my_function"
    for name in ("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default", "x" * 80):
        assert len(short_label(name)) <= LABEL_CHARS and short_label(name).endswith("…")
    c = hbar_chart("ops", [("torch.nn.functional.scaled_dot_product_attention", [1, 0])], [("a", "#000"), ("b", "#111")])
    assert c["bars"][0]["full"] == "torch.nn.functional.scaled_dot_product_attention"
    assert c["label_w"] >= 7 * len(c["bars"][0]["label"])  # the label column fits the label

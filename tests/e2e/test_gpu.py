"""--device cuda: end to end on pre-generated bundles (`pytest -m gpu`), and the cross-device judge on synthetic outputs (everywhere).

The GPU tests need bundles: `gpu_bundles/<example>/` (or $EQSAT_GPU_BUNDLES), made on a host with
egglog by `python tests/test_gpu.py gpu_bundles`; where egglog is installed they are generated on
the fly instead. Without a CUDA GPU the gpu-marked tests skip.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import repo_env

from eqsat_test.codegen_templates import render
from eqsat_test.lowering.manifest import Graph, Manifest, Variant
from eqsat_test.runners.checks.devices import (
    DEVICE_MISMATCH,
    cross_device_findings,
    inputs_digest,
    judge_across_devices,
    kernel_source,
    to_device,
)
from eqsat_test.runners.records import COMPILER_BUG_KINDS, Result, as_finding

REPO = Path(__file__).resolve().parents[2]
BUNDLES = Path(os.environ.get("EQSAT_GPU_BUNDLES", REPO / "gpu_bundles"))
EXAMPLES = ("mlp", "elementwise", "attention", "conv_block")
GEN_VARIANTS = 3
GEN_RULES_FALLBACK = ("spelling", "algebra", "activation", "linalg", "reduction", "neutral")
CPP_BUG = 'inductor+cpp.inject_relu_bug_TESTING_ONLY="accuracy"'
TRITON_BUG = 'inductor+triton.inject_relu_bug_TESTING_ONLY="accuracy"'

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


# ----------------------------------------------------------------------------------------------
# helpers


def eqsat(*args: str, timeout: float = 560) -> subprocess.CompletedProcess:
    """The real command line (`python -m runners.cli` is what the `eqsat-test` script runs)."""
    return subprocess.run([sys.executable, "-m", "eqsat_test.runners.cli", *args], capture_output=True, text=True,
                          env=repo_env(), timeout=timeout, cwd=REPO)


def generate_bundle(example: str, dest: Path, variants: int = GEN_VARIANTS) -> Path:
    """Generate a bundle of examples/<example>.py (needs egglog): the whole rule library, or the
    rule sets of GEN_RULES_FALLBACK where a rule file of the library fails to compile."""
    model = REPO / "examples" / f"{example}.py"
    r = eqsat("generate", str(model), "-n", str(variants), "-o", str(dest), timeout=900)
    if r.returncode != 0:
        rules = [a for rs in GEN_RULES_FALLBACK for a in ("-r", rs)]
        r = eqsat("generate", str(model), "-n", str(variants), *rules, "-o", str(dest), timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return dest


@pytest.fixture(scope="session")
def bundles(tmp_path_factory) -> dict[str, Path]:
    found = {e: BUNDLES / e for e in EXAMPLES if (BUNDLES / e / "manifest.json").is_file()}
    if len(found) == len(EXAMPLES):
        return found
    try:
        import egglog  # noqa: F401
    except ImportError:
        pytest.skip(f"no pre-generated bundles in {BUNDLES} and no egglog to make them "
                    f"(python tests/test_gpu.py {BUNDLES} on a host with egglog)")
    root = tmp_path_factory.mktemp("gpu_bundles")
    return {e: found.get(e) or generate_bundle(e, root / e) for e in EXAMPLES}


def exec_json(bundle: Path, out: Path, *opts: str) -> tuple[int, dict, dict]:
    """`eqsat-test exec BUNDLE --json ...`: (exit code, report, results.json raw results by task)."""
    # The program's own dtypes and sizes (no sweeps), no minimizing, no debug reruns: this file
    # tests the devices; tests/test_sweeps.py and tests/test_artifacts.py test those.
    r = eqsat("exec", str(bundle), "--json", "--no-minimize", "--no-sweep", "--no-artifacts", "-j", "8",
              "-o", str(out), *opts)
    assert r.returncode in (0, 1), f"exit {r.returncode}\n{r.stderr[-4000:]}"
    report = json.loads(r.stdout)
    raw = json.loads((out / "results.json").read_text())["raw"]
    return r.returncode, report, {x["task"]: x for x in raw}


def bugs(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["kind"] in COMPILER_BUG_KINDS]


# ----------------------------------------------------------------------------------------------
# on the GPU


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("example", EXAMPLES)
def test_cuda_and_cpu_no_false_alarms(bundles, tmp_path, example):
    """inductor and aot_eager on cuda and cpu: every task runs, no compiler-bug candidates, and
    each variant's input sets are bit-for-bit the same on both devices."""
    bundle = bundles[example]
    code, report, raw = exec_json(bundle, tmp_path / "out", "--device", "cuda", "--device", "cpu",
                                  "-b", "inductor", "-b", "aot_eager", "--inputs", "given,random")
    assert not bugs(report), json.dumps(bugs(report), indent=1)[:4000]
    assert code == 0
    assert report["stats"]["devices"] == ["cuda", "cpu"]
    manifest = json.loads((bundle / "manifest.json").read_text())
    n = len(manifest["variants"])
    assert report["executed"] == n * 2 * 2
    for v in manifest["variants"]:
        for b in ("inductor", "aot_eager"):
            rc, rg = raw[f"{v['id']}@{b}@cpu"], raw[f"{v['id']}@{b}@cuda"]
            assert rc["status"] == rg["status"] == "ok", (rc.get("error"), rg.get("error"))
            assert rg["device"] == "cuda"
            dc = {s["name"]: s["inputs_digest"] for s in rc["input_sets"]}
            dg = {s["name"]: s["inputs_digest"] for s in rg["input_sets"]}
            assert dc == dg and len(dc) == 2  # given and random-0, identical across devices
            for s in dg:  # both devices' compiled outputs were kept for the cross-device judge
                assert (Path(rc["save_compiled"]) / f"{s}.out.pt").is_file()
                assert (Path(rg["save_compiled"]) / f"{s}.out.pt").is_file()


@pytest.mark.gpu
@needs_gpu
def test_fault_on_one_device_is_attributed_to_it_and_keeps_kernel_source(bundles, tmp_path):
    """A relu fault injected into Inductor's C++ codegen touches the CPU only, one injected into
    its Triton codegen the GPU only. Right verdicts: a same-device (seed-)miscompile on the
    faulty device, its `cross_device` note saying the fault is that device's alone, nothing on
    the other device, no device-mismatch (the same-device oracle already saw it). Each finding
    keeps Inductor's generated code, with the injected `+ 1`, as kernel_source.py."""
    bundle = bundles["mlp"]  # F.relu in the seed: every variant that keeps a relu is hit
    code, report, raw = exec_json(bundle, tmp_path / "out", "--device", "cuda", "--device", "cpu",
                                  "-b", CPP_BUG, "-b", TRITON_BUG, "--inputs", "given,random")
    found = bugs(report)
    assert code == 1 and found
    assert {f["kind"] for f in found} <= {"miscompile", "seed-miscompile"}, [f["kind"] for f in found]
    expected_device = {CPP_BUG: "cpu", TRITON_BUG: "cuda"}
    for f in found:
        assert f["device"] == expected_device[f["backend"]], (f["backend"], f["device"], f["detail"])
        cd = f.get("cross_device")
        assert cd and cd["outlier"] and not cd["other_outlier"], cd
        assert "alone" in cd["detail"]
    assert {f["device"] for f in found} == {"cpu", "cuda"}
    assert any(f["variant"].endswith("_seed") for f in found if f["device"] == "cuda")
    for f in found:
        ks = Path(f["repro"]).with_name("kernel_source.py")
        assert ks.is_file(), f"no kernel source in {ks.parent}"
        text = ks.read_text()
        if f["device"] == "cuda":
            assert "@triton.jit" in text and "+ 1" in text, text[:2000]
        else:
            assert "decltype" in text and "+ decltype" in text, text[:2000]


NONDET_VARIANT = '''# handmade by tests/test_gpu.py: a program whose eager output on cuda changes from call to call
# (so the same-device oracle cannot judge it) and whose compiled cuda output carries a fault.
import torch
from pathlib import Path

DEVICE = torch.device("cpu")
INPUTS_FILE = Path(__file__).with_name("g0.inputs.pt")
INPUT_NAMES = ["x"]
_CALLS = [0]


def forward(x):
    y = torch.relu(x) * 2.0
    if x.is_cuda:
        if torch.compiler.is_compiling():
            y = y + 1.0  # the "compiler bug": compiled on cuda only
        else:
            _CALLS[0] += 1
            y = y.clone()
            y[0, 0] += 1e-3 * _CALLS[0]  # eager on cuda: nondeterministic
    return (y.sum(dim=1), (y > 1.5).sum(dim=0))


def index_sources(x):
    return {}


''' + render("variant_tail.py.j2")  # Model, get_inputs: as emitted


def handmade_bundle(dest: Path, variant_source: str) -> Path:
    """A one-program bundle (the seed only), written without egglog."""
    dest.mkdir(parents=True, exist_ok=True)
    torch.save([torch.randn(16, 32, generator=torch.Generator().manual_seed(0))], dest / "g0.inputs.pt")
    (dest / "g0_seed.py").write_text(variant_source)
    manifest = {"format": "eqsat-bundle/1", "model": "handmade", "convention": "kernelbench", "seed": 0,
                "rules": {"count": 0, "fired": {}},
                "graphs": [{"id": "g0", "inputs_file": "g0.inputs.pt", "input_names": ["x"], "is_param": [False],
                            "ops": 4, "op_names": ["relu", "mul", "sum", "gt"]}],
                "variants": [{"id": "g0_seed", "graph": "g0", "file": "g0_seed.py", "seed": True, "mode": "seed",
                              "rules": [], "ops": 4}]}
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


@pytest.mark.gpu
@needs_gpu
def test_device_mismatch_when_the_same_device_oracle_cannot_judge(tmp_path):
    """Eager on cuda is nondeterministic (not judged on cuda) and compiled cuda is off: only the
    cross-device judge sees it, as a device-mismatch on cuda; cpu stays clean."""
    bundle = handmade_bundle(tmp_path / "bundle", NONDET_VARIANT)
    code, report, raw = exec_json(bundle, tmp_path / "out", "--device", "cuda", "--device", "cpu",
                                  "-b", "aot_eager", "--inputs", "given,random")
    found = bugs(report)
    assert code == 1
    assert [(f["kind"], f["device"]) for f in found] == [(DEVICE_MISMATCH, "cuda")], found
    f = found[0]
    assert f["other_device"] == "cpu" and f["same_device_verdict"] == "nondeterministic"
    assert any(n["kind"] == "nondeterministic" and n["device"] == "cuda" for n in report["findings"])
    folder = Path(f["repro"]).parent
    assert (folder / "inputs.pt").is_file() and (folder / "meta.json").is_file()
    r = subprocess.run([sys.executable, str(folder / "repro.py")], capture_output=True, text=True, timeout=300,
                       cwd=folder)
    assert r.returncode == 1 and "DEVICE-MISMATCH" in r.stdout, r.stdout + r.stderr[-2000:]


# ----------------------------------------------------------------------------------------------
# the cross-device judge on synthetic outputs (no GPU needed: the device names are labels)


def _outs(e_cpu, c_cpu, e_gpu, c_gpu) -> dict:
    return {"cpu": {"eager": e_cpu, "compiled": c_cpu}, "cuda": {"eager": e_gpu, "compiled": c_gpu}}


def _noisy(f64: torch.Tensor, seed: int, ulps: float = 2.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = f64.float()
    return x + (torch.rand(x.shape, generator=g) - 0.5) * ulps * torch.finfo(torch.float32).eps * x.abs()


F64 = torch.randn(64, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * 3


def test_honest_device_differences_pass():
    v = judge_across_devices(_outs(_noisy(F64, 1), _noisy(F64, 2), _noisy(F64, 3), _noisy(F64, 4)), F64)
    assert not v["cpu"]["outlier"] and not v["cuda"]["outlier"]


def test_fault_on_one_device_is_that_devices_alone():
    good = _noisy(F64, 1)
    v = judge_across_devices(_outs(good, good + 1.0, _noisy(F64, 2), _noisy(F64, 3)), F64)
    assert v["cpu"]["outlier"] and not v["cuda"]["outlier"]
    v = judge_across_devices(_outs(good, _noisy(F64, 2), good, good * 1.01), F64)
    assert v["cuda"]["outlier"] and not v["cpu"]["outlier"]


def test_eager_that_differs_across_devices_is_not_a_compiler_fault():
    """GPU eager (and so GPU compiled) further from fp64 than the CPU, e.g. TF32 convolutions:
    compiled cuda disagrees with compiled cpu but agrees with its own eager."""
    tf32 = (F64 * (1 + 1e-3)).float()
    v = judge_across_devices(_outs(_noisy(F64, 1), _noisy(F64, 2), tf32, tf32 * (1 + 1e-7)), F64)
    assert not v["cuda"]["outlier"] and not v["cpu"]["outlier"]
    assert not v["cuda"]["vs_other"].ok  # it does differ from the CPU; the eager check excuses it


def test_ints_and_nan_positions_are_exact():
    ints = torch.arange(10)
    odd = ints.clone()
    odd[3] = 99
    v = judge_across_devices(_outs(ints, ints, ints, odd), None)
    assert v["cuda"]["outlier"] and not v["cpu"]["outlier"]
    # the same int difference in eager and compiled on cuda (say a NaN -> int cast, which the
    # devices define differently) is an honest device difference
    v = judge_across_devices(_outs(ints, ints, odd, odd), None)
    assert not v["cuda"]["outlier"] and not v["cpu"]["outlier"]
    x = _noisy(F64, 1)
    nan = x.clone()
    nan[0, 0] = float("nan")
    v = judge_across_devices(_outs(x, x, x, nan), F64)
    assert v["cuda"]["outlier"] and "NaN" in v["cuda"]["vs_other"].detail


def test_input_sets_are_made_on_the_cpu_and_moved():
    from eqsat_test.runners.oracle.inputs import input_sets
    base = [torch.randn(5, 7), torch.tensor([0, 3, 2]), torch.randn(3).t()]
    a = input_sets(base, seed=3)
    b = input_sets(to_device(base, "cpu"), seed=3)
    assert [inputs_digest(s.inputs) for s in a] == [inputs_digest(s.inputs) for s in b]
    assert len({inputs_digest(s.inputs) for s in a}) == 3
    if torch.cuda.is_available():
        moved = [inputs_digest(to_device(list(s.inputs), "cuda")) for s in a]
        assert moved == [inputs_digest(list(s.inputs)) for s in a]


def _fake_run(tmp: Path, outs: dict, *, gpu_kind: str = "match") -> tuple[Manifest, list[Result], Path]:
    """A manifest, worker results and scratch files as the pipeline would leave them."""
    scratch = tmp / "scratch"
    manifest = Manifest(variants=(Variant("g0_v001", "g0", "g0_v001.py", mode="uniform", rules=("r",)),),
                        graphs=(Graph("g0", inputs_file="g0.inputs.pt", is_param=(False,), op_names=("add",)),))
    results = []
    for dev, o in outs.items():
        e_dir = scratch / "eager" / f"g0_v001__{dev}"
        c_dir = scratch / "compiled" / f"g0_v001__inductor__{dev}"
        e_dir.mkdir(parents=True)
        c_dir.mkdir(parents=True)
        torch.save(o["eager"], e_dir / "given.pt")
        torch.save(o["compiled"], c_dir / "given.out.pt")
        if dev == "cpu":
            torch.save(F64, e_dir / "given.fp64.pt")
        kind = gpu_kind if dev == "cuda" else "match"
        results.append(Result.from_dict({
            "task": f"g0_v001@inductor@{dev}", "variant": "g0_v001", "backend": "inductor", "device": dev,
            "status": "ok", "save_compiled": str(c_dir), "seed": 0,
            "input_sets": [{"name": "given", "ok": True, "kind": kind, "inputs_digest": "abc"}]}))
    return manifest, results, scratch


def test_cross_device_findings_annotate_a_same_device_miscompile(tmp_path):
    good = _noisy(F64, 1)
    manifest, results, scratch = _fake_run(tmp_path, _outs(good, good + 1.0, _noisy(F64, 2), _noisy(F64, 3)))
    same = [as_finding({"variant": "g0_v001", "backend": "inductor", "device": "cpu", "kind": "miscompile",
                        "input_set": "given"})]
    same, new = cross_device_findings(manifest, results, scratch, same)
    assert new == []  # the cpu miscompile already says it; no device-mismatch on top
    assert same[0].cross_device["outlier"] and "cpu's alone" in same[0].cross_device["detail"]


def test_cross_device_findings_report_what_the_same_device_check_could_not_see(tmp_path):
    good = _noisy(F64, 1)
    manifest, results, scratch = _fake_run(tmp_path, _outs(good, _noisy(F64, 2), good, good + 0.5),
                                           gpu_kind="nondeterministic")
    _, new = cross_device_findings(manifest, results, scratch, [])
    assert [(f.kind, f.device, f.other_device) for f in new] == [(DEVICE_MISMATCH, "cuda", "cpu")]
    assert new[0].same_device_verdict == "nondeterministic" and new[0].max_abs_err > 0.4


def test_cross_device_findings_skip_input_sets_that_differ(tmp_path):
    good = _noisy(F64, 1)
    manifest, results, scratch = _fake_run(tmp_path, _outs(good, good, good, good + 1))
    results[0] = results[0].with_(input_sets=(dataclasses.replace(results[0].input_sets[0], inputs_digest="other"),))
    notes: list = []
    assert cross_device_findings(manifest, results, scratch, [], notes) == ([], [])
    assert notes and notes[0].kind == "internal-error" and "differs across devices" in notes[0].detail


def test_kernel_source_prefers_output_code(tmp_path):
    kernel = tmp_path / "k.py"
    kernel.write_text("@triton.jit\ndef triton_poi(x): pass\n")
    wrapper = tmp_path / "w.py"
    wrapper.write_text("async_compile.triton('triton_poi', '''...''')\ndef call(args):\n    pass\n")
    text = kernel_source([str(kernel), str(wrapper), str(tmp_path / "gone.py")], header="# hdr")
    assert text.startswith("# hdr") and "def call(" in text and "def triton_poi" not in text
    assert kernel_source([str(kernel)]).count("triton_poi") == 1
    assert kernel_source([str(tmp_path / "gone.py")]) is None


if __name__ == "__main__":  # make the bundles the GPU tests carry to a host without egglog
    dest = Path(sys.argv[1] if len(sys.argv) > 1 else BUNDLES)
    for e in EXAMPLES:
        if not (dest / e / "manifest.json").is_file():
            generate_bundle(e, dest / e)
            print(f"wrote {dest / e}")

"""--coverage: the compiler lines a task reaches (runners/exec/compiler_lines.py) and what variants and sweeps add (runners/checks/line_gain.py)."""
from __future__ import annotations

import json
import sys

import pytest

from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.runners.checks.line_gain import group_of, line_gain, summary_line
from eqsat_test.runners.exec.compiler_lines import LineRecorder, measured, read_lines
from eqsat_test.runners.records import Result, ResultStatus, Task


def test_pass_files_fall_into_their_groups():
    assert group_of("_inductor/fx_passes/joint_graph.py") == "fx_passes"
    assert group_of("_inductor/lowering.py") == "lowering"
    assert group_of("_inductor/codegen/cpp.py") == "codegen"
    assert group_of("_decomp/decompositions.py") == "decompositions"
    assert group_of("_refs/__init__.py") == "decompositions"
    assert group_of("_inductor/decomposition.py") == "decompositions"
    assert group_of("_functorch/aot_autograd.py") == "functorch"
    assert group_of("_inductor/graph.py") == "inductor_other"


def _lines_file(tmp_path, name, lines):
    p = tmp_path / f"{name}.json"
    p.write_text(json.dumps({"task": name, "lines": lines}))
    return {"file": str(p), "lines": sum(len(v) for v in lines.values())}


def test_line_gain_compares_each_task_with_its_seed(tmp_path):
    manifest = Manifest(variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True),
                                  Variant("g0_v001", "g0", "g0_v001.py"), Variant("g0_v002", "g0", "g0_v002.py")))
    seed = {"_inductor/lowering.py": [1, 2, 3], "_inductor/ir.py": [10]}
    results = [
        {"task": "g0_seed@inductor@cpu", "variant": "g0_seed", "backend": "inductor", "device": "cpu", "status": "ok",
         "compiler_lines": _lines_file(tmp_path, "s", seed)},
        {"task": "g0_v001@inductor@cpu", "variant": "g0_v001", "backend": "inductor", "device": "cpu", "status": "ok",
         "compiler_lines": _lines_file(tmp_path, "v1", {**seed, "_inductor/fx_passes/joint_graph.py": [5, 6]})},
        {"task": "g0_v002@inductor@cpu", "variant": "g0_v002", "backend": "inductor", "device": "cpu", "status": "ok",
         "compiler_lines": _lines_file(tmp_path, "v2", {"_inductor/lowering.py": [1, 4],
                                                         "_inductor/fx_passes/joint_graph.py": [6]})},
        {"task": "g0_seed@inductor@cpu#sweep", "variant": "g0_seed", "backend": "inductor", "device": "cpu", "status": "ok",
         "sweep_task": True, "compiler_lines": _lines_file(tmp_path, "sw", {"_inductor/codegen/cpp.py": [7]})},
        {"task": "g0_v001@inductor@cpu#no-lines", "variant": "g0_v001", "backend": "inductor", "device": "cpu",
         "status": "ok"},
    ]
    got = line_gain(manifest, [Result.from_dict(r) for r in results])
    assert got["tasks"]["g0_v001@inductor@cpu"] == {"lines": 6, "new_vs_seed": 2, "new_by_group": {"fx_passes": 2}}
    assert got["tasks"]["g0_v002@inductor@cpu"]["new_vs_seed"] == 2  # lowering 4, joint_graph 6
    s = got["summary"]["inductor/cpu"]
    assert s["seed_lines"] == 4
    assert s["variant_gain"] == 3 and s["variant_gain_by_group"] == {"fx_passes": 2, "lowering": 1}
    assert s["sweep_gain"] == 1 and s["sweep_gain_by_group"] == {"codegen": 1}
    assert s["variants_measured"] == 2 and s["all_lines"] == 8
    assert "seed 4 lines; 2 variants add 3 (+75%); seed sweeps add 1 (+25%)" in summary_line(got)
    assert line_gain(manifest, [Result(task="t", variant="g0_seed", backend="b", device="d", status=ResultStatus.OK)]) is None


@pytest.mark.slow  # a real torch.compile traced line by line
def test_a_compile_reaches_inductor_lines_and_the_file_records_them(tmp_path):
    import torch

    def task(t):
        torch._dynamo.reset()
        torch.compile(lambda x: (x.relu() * 2).sum(-1))(torch.randn(4, 4))
        return Result(task=t.id, status=ResultStatus.OK)

    res = measured(Task(id="t", coverage=str(tmp_path / "t.json")), task)
    assert res.compiler_lines is not None
    lines = read_lines(res.compiler_lines["file"])
    assert res.compiler_lines["lines"] == sum(len(v) for v in lines.values()) > 1000
    assert any(f.startswith("_inductor/codegen/") for f in lines)
    assert all(f.startswith(("_inductor/", "_functorch/", "_decomp/", "_refs/")) for f in lines)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12+")
def test_sys_monitoring_records_lines_without_coverage_py(monkeypatch):
    import torch._refs as refs
    rec = LineRecorder()
    rec.backend = "sys.monitoring"
    rec.start()
    import torch
    refs.add(torch.ones(2), torch.ones(2))
    lines = rec.stop()
    assert any(f.startswith("_refs/") for f in lines)

"""A short real run of transformers zoo models through the command line: variants compiled by Inductor and judged,
0 internal errors, and no compiler-bug candidate on a correct compiler path (a null backend)."""
from __future__ import annotations

import pytest
from conftest import REPO

ZOO = REPO / "benchmarks" / "zoo"


@pytest.mark.parametrize("name,backend", [("hf_bert", "inductor"), ("hf_llama", "aot_eager")])
def test_zoo_model_short_run_has_no_internal_error(eqsat, tmp_path, name, backend):
    pytest.importorskip("transformers")
    res = eqsat(ZOO / f"{name}.py", "-n", "2", "--jobs", "1", "--inputs", "given,random", "--no-sweep", "--no-artifacts",
                "--sat-seconds", "4", "--timeout", "300", "-b", backend, "--json", "--out", tmp_path / "out", timeout=900)
    assert res.rc in (0, 1), f"rc={res.rc}\n{res.stderr[-3000:]}"
    report = res.json
    assert report["stats"]["internal_errors"] == 0, [f for f in report["findings"] if f["kind"] in ("internal-error", "emit-error")]
    assert report["variants"] == 2 and report["executed"] == 3
    if backend != "inductor":  # a null compiler: nothing to find
        assert res.rc == 0, report["findings"]

"""The run summary says what the sweeps covered and why the rest was not swept (runners/checks/sweep_coverage.py), from sweep results shaped as the worker writes them."""
from __future__ import annotations

import json

from eqsat_test.lowering.manifest import Manifest, Variant
from eqsat_test.runners.checks.sweep_coverage import SweepCoverage, coverage_lines, sweep_coverage
from eqsat_test.runners.records import Result

CFG = {"dtypes": ["float16", "bfloat16", "float64", "int8", "bool"], "sizes": [1, 7, 8], "points": 2,
       "dynamic": "seed", "seconds": 150.0, "max_elements": 65536}
MANIFEST = Manifest(variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True),
                              Variant("g0_v001", "g0", "g0_v001.py", dtypes=("float64",)),
                              Variant("g0_v002", "g0", "g0_v002.py", fixed_sizes=True)))


def _seed(**summary) -> Result:
    base = {"own_dtype": "float32", "dtypes": {"float16": "follow", "float64": "follow"}, "groups": [],
            "skipped": {}, "points": [], "dynamic_sizes": [], "eager_invalid_points": [], "truncated": False}
    return Result.from_dict({"variant": "g0_seed", "backend": "inductor", "device": "cpu", "status": "ok",
                             "task": "g0_seed#sweep", "sweep": {**base, **summary}})


def _variant(vid: str) -> Result:
    return Result.from_dict({"variant": vid, "backend": "inductor", "device": "cpu", "status": "ok", "sweep": {}})


def test_dtypes_not_swept_are_named_with_their_reason():
    r = _seed(skipped={"dtype=int8": "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Char",
                       "dtype=bool": "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and Bool",
                       "dtype=bfloat16": "no floating non-parameter input"},
              groups=["input0.0=4"], points=["dtype=float16", "sizes=[7]", "sizes=[8]"], dynamic_sizes=[[7], [8]])
    cov = sweep_coverage([r, _variant("g0_v001"), _variant("g0_v002")], MANIFEST, CFG)
    (seed,) = cov.seeds
    assert seed.dtypes == ("float16", "float64") and set(seed.dtypes_not) == {"int8", "bool", "bfloat16"}
    assert SweepCoverage.from_dict(json.loads(json.dumps(cov.to_dict()))) == cov  # as results.json keeps it
    text = "\n".join(coverage_lines(cov, {"judged": 10, "tasks": 3, "compiles": 2, "seconds": 5.0, "truncated": 0}))
    assert "not swept: bfloat16 (no floating non-parameter input); int8, bool (the program fails eagerly at them, e.g. int8: RuntimeError: mat1" in text
    assert "bfloat16 (no floating non-parameter input)" in text
    assert "sizes swept over 1 free dim group(s) (input0.0=4): 2 static size points, dynamic=True over 2 sizes" in text
    assert "variants: 2 of 2 swept, 2 sampled points each" in text
    assert "1 at their rules' dtypes only" in text and "1 at their own sizes only" in text


def test_why_sizes_were_not_swept():
    fixed = _seed(skipped={"size=64": "fixed (the program fails eagerly when these dims change)"})
    cov = sweep_coverage([fixed], MANIFEST, CFG)
    assert cov.seeds[0].sizes_not.startswith("no free dimension: 64: fixed (the program fails eagerly")
    too_big = _seed(groups=["input0.0=512"], points=["dtype=float16"])
    cov = sweep_coverage([too_big], MANIFEST, CFG)
    assert "no size point fits the sweep's bound of 65,536 elements" in cov.seeds[0].sizes_not
    assert "not asked for" in sweep_coverage([fixed], MANIFEST, {**CFG, "sizes": []}).seeds[0].sizes_not


def test_cut_short_names_the_sweeps_own_cap_and_no_sweep_says_so():
    cov = sweep_coverage([_seed(truncated=True)], MANIFEST, CFG)
    text = "\n".join(coverage_lines(cov, {"judged": 1, "tasks": 1, "compiles": 1, "seconds": 150.0, "truncated": 1}))
    assert "cut short by the sweeps' own time cap (150 s per sweep task: half of --timeout" in text
    assert coverage_lines(sweep_coverage([], MANIFEST, None), None)[0].startswith("  sweeps: none (--no-sweep")
    failed = Result.from_dict({"variant": "g0_seed", "status": "timeout", "error": {"message": "no result within 300 s"}})
    assert "sweep task ended in timeout" in "\n".join(coverage_lines(sweep_coverage([failed], MANIFEST, CFG), {}))


def test_layouts_costly_points_and_points_set_aside_are_named():
    points = ["dtype=float16,sizes=[256]", "dtype=float64", "sizes=[0]", "sizes=[7]", "dtype=float16,sizes=[7]",
              "layout=strided,sizes=[256]", "layout=expanded,sizes=[256]"]
    cats = ["dtype", "dtype", "sizes", "sizes", "dtype,sizes", "layout", "layout"]
    r = _seed(groups=["input0.0+input0.1=512"], points=points, point_categories=cats,
              cost_sizes={"": [256], "float16": [256]}, eager_invalid_points=["layout=expanded,sizes=[256]"])
    cov = sweep_coverage([r], MANIFEST, CFG)
    (seed,) = cov.seeds
    assert seed.size_points == 3 and seed.layouts == ("strided", "expanded")  # cost-sized dtype points are no size points
    assert SweepCoverage.from_dict(json.loads(json.dumps(cov.to_dict()))) == cov
    text = "\n".join(coverage_lines(cov, {}))
    assert "layouts swept: strided, expanded" in text
    assert "costly at the given sizes, run smaller: float32 at [256], float16 at [256]" in text
    assert "1 point(s) set aside, the program raises eagerly at them: layout=expanded,sizes=[256]" in text
    costly = _seed(skipped={"layouts": "too costly: ~9 s of eager work an input set at float32 (...)"})
    assert "layouts not swept: too costly: ~9 s" in "\n".join(coverage_lines(sweep_coverage([costly], MANIFEST, CFG), {}))

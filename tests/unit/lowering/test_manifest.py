"""The bundle manifest record (lowering/manifest.py): one reader, one writer, old manifests read, no change in place."""
from __future__ import annotations

import dataclasses
import json

import pytest

from eqsat_test.lowering.manifest import (
    MANIFEST_VERSION,
    Extraction,
    Graph,
    GraphLeftOut,
    Manifest,
    ManifestError,
    ManifestRules,
    Saturation,
    Variant,
    load_manifest,
)

# A manifest as generation wrote it before the `version` field (examples/elementwise.py, `-n 4`; the rule
# lists cut to three rules and the variants to three, nothing else changed).
OLD_MANIFEST = """{"format": "eqsat-bundle/1", "model": "examples/elementwise.py", "model_sha": "c8f2fa2600244d4f",
 "convention": "kernelbench", "torch_version": "2.13.0+cpu",
 "sizes": {"policy": "test", "max_elements": 262144, "scaled": {}, "input_shapes": [[12, 7], [12, 7]],
           "given_shapes": [[12, 7], [12, 7]], "fallback": false, "note": ""},
 "seed": 0, "created": "2026-11-28T08:25:35",
 "rules": {"count": 3, "compiled": 4, "errors": [],
           "names": ["abs_idempotent", "double_transpose", "transpose01_is_transpose10"],
           "families": {"abs_idempotent": "algebra", "double_transpose": "layout", "transpose01_is_transpose10": "layout"},
           "numerics": {"abs_idempotent": "exact", "double_transpose": "exact", "transpose01_is_transpose10": "exact"},
           "dtypes": {"abs_idempotent": ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32",
                                         "int64", "uint8"]},
           "fix_sizes": ["amax_last_is_two_overlapping_partials"], "left_out": {},
           "fired": {"abs_idempotent": 0, "double_transpose": 308, "transpose01_is_transpose10": 748}},
 "train": false,
 "graphs": [{"id": "g0", "inputs_file": "g0.inputs.pt", "input_names": ["l_x_", "l_y_"], "is_param": [false, false],
             "ops": 19, "op_names": ["Tensor.abs", "Tensor.contiguous", "Tensor.sum", "Tensor.t", "operator.add",
                                     "operator.gt", "operator.mul", "operator.neg", "operator.pow", "operator.sub",
                                     "operator.truediv", "torch.clamp", "torch.exp", "torch.where"],
             "mutating": false, "opaque": [], "functionalized": 0, "effects": [], "writes": [], "captured_seed": false,
             "saturation": {"iterations": 7, "enodes": 25492, "stop_reason": "seconds", "stop": "stopped: time budget",
                            "seconds": 5.212, "sizes": [131, 360, 819, 1848, 4075, 9500, 25492]},
             "extraction": {"eclasses": 7423, "enodes": 25488, "log10_choice_space": 1222.81, "attempts": 4,
                            "distinct": 4}}],
 "variants": [{"id": "g0_seed", "graph": "g0", "file": "g0_seed.py", "program": "g0_seed.program.json", "seed": true,
               "mode": "seed", "rules": [], "ops": 19, "key": "d1c138703b7baf53"},
              {"id": "g0_v001", "graph": "g0", "file": "g0_v001.py", "program": "g0_v001.program.json", "seed": false,
               "mode": "uniform", "rules": ["double_transpose", "transpose01_is_transpose10"],
               "rule_numerics": {"double_transpose": "exact", "transpose01_is_transpose10": "exact"},
               "dtypes": [], "ops": 39, "key": "5530705a64ec787c"},
              {"id": "g0_v002", "graph": "g0", "file": "g0_v002.py", "program": "g0_v002.program.json", "seed": false,
               "mode": "near-original", "rules": ["transpose01_is_transpose10", "double_transpose"],
               "rule_numerics": {"transpose01_is_transpose10": "exact", "double_transpose": "exact"},
               "ops": 19, "key": "e5931b3d4c205966"}],
 "timings": {"load": 4.0965, "rules": 2.2714, "capture": 2.2235, "lift": 0.0693, "render": 0.9967, "saturate": 5.2224,
             "extract": 2.0004}}"""


def _full() -> Manifest:
    """Every field set, the optional ones included."""
    return Manifest(
        model="m.py", model_sha="abc", convention="kernelbench", torch_version="2.13.0+cpu",
        sizes={"policy": "test", "max_elements": 64, "scaled": {"N": [4096, 8]}}, seed=3, created="2026-11-28T09:00:00",
        rules=ManifestRules(count=2, compiled=3, errors=("bad: no", ), names=("r1", "r2"),
                            families={"r1": "algebra", "r2": "pattern"}, numerics={"r1": "exact", "r2": "approximate"},
                            dtypes={"r2": ("float32",)}, fix_sizes=("r2",), left_out={"r3": "claims exact"},
                            grad={"r1": "exact", "r2": "edge"}, fired={"r2": 5, "r1": 1}),
        train=True,
        graphs=(Graph("g0", inputs_file="g0.inputs.pt", input_names=("x", "w"), is_param=(False, True), ops=4,
                      op_names=("torch.relu",), functionalized=2, effects=("x",), writes=("x",), captured_seed=True,
                      saturation=Saturation(3, 40, "iterations", "stopped: iteration budget", 0.25, (10, 20, 40)),
                      extraction=Extraction(12, 40, 3.5, 9, 2)),
                Graph("g1", mutating=True, opaque=("opaque.f",), skipped_rewrites="in-place ops")),
        variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True, mode="seed", program="g0_seed.program.json",
                          ops=4, key="k0"),
                  Variant("g0_v001", "g0", "g0_v001.py", mode="uniform", rules=("r2", "r1"),
                          rule_numerics={"r2": "approximate", "r1": "exact"}, program="g0_v001.program.json",
                          dtypes=("float32",), fixed_sizes=True, ops=6, key="k1"),
                  Variant("g1_seed", "g1", "g1_seed.py", seed=True, mode="seed")),
        graphs_left_out=(GraphLeftOut("g2", "calls a lambda"),), timings={"load": 1.5})


def test_to_json_and_from_json_round_trip():
    m = _full()
    text = m.to_json()
    assert json.loads(text)["version"] == MANIFEST_VERSION and json.loads(text)["format"] == "eqsat-bundle/1"
    assert Manifest.from_json(text) == m
    bare = Manifest(variants=(Variant("g0_seed", "g0", "g0_seed.py", seed=True),), graphs=(Graph("g0"),))
    assert Manifest.from_json(bare.to_json()) == bare
    assert "graphs_left_out" not in bare.to_dict() and "grad" not in bare.to_dict()["rules"]


def test_an_old_manifest_reads_and_is_written_back_with_its_keys(tmp_path):
    old = json.loads(OLD_MANIFEST)
    assert "version" not in old
    m = Manifest.from_json(OLD_MANIFEST)
    assert m.model == "examples/elementwise.py" and m.rules.fired["transpose01_is_transpose10"] == 748
    assert [v.id for v in m.variants] == ["g0_seed", "g0_v001", "g0_v002"] and m.seed_of == {"g0": "g0_seed"}
    assert m.variant("g0_v001").dtypes == () and m.variant("g0_v002").dtypes is None  # none, vs. every dtype
    assert m.variant("g0_seed").rule_numerics is None and m.graph("g0").extraction.distinct == 4
    assert m.rules.grad is None and m.rewritten_count == 2
    assert m.to_dict() == {**old, "version": MANIFEST_VERSION}  # the writer keeps every key the old one wrote
    (tmp_path / "manifest.json").write_text(OLD_MANIFEST)
    assert load_manifest(tmp_path) == m


def test_what_is_not_a_manifest_is_said(tmp_path):
    with pytest.raises(ManifestError, match="not valid JSON"):
        Manifest.from_json("{")
    with pytest.raises(ManifestError, match="unknown bundle format"):
        Manifest.from_json(json.dumps({"format": "eqsat-bundle/9", "graphs": [], "variants": []}))
    with pytest.raises(ManifestError, match="version 3"):
        Manifest.from_json(json.dumps({**json.loads(OLD_MANIFEST), "version": MANIFEST_VERSION + 1}))
    with pytest.raises(ManifestError, match="missing or mistyped"):
        Manifest.from_json(json.dumps({"format": "eqsat-bundle/1", "graphs": []}))
    with pytest.raises(ManifestError, match="missing or mistyped"):
        Manifest.from_json(json.dumps({"format": "eqsat-bundle/1", "graphs": [], "variants": [{"id": "v"}]}))
    with pytest.raises(ManifestError, match="no manifest.json"):
        load_manifest(tmp_path)
    from eqsat_test.runners.pipeline import BadBundle, read_manifest
    (tmp_path / "manifest.json").write_text("[]")
    with pytest.raises(BadBundle, match="manifest.json: a manifest is a JSON object"):
        read_manifest(tmp_path)


def test_with_variants_makes_a_new_manifest(tmp_path):
    m = _full()
    new = Variant("g0_v002", "g0", "g0_v002.py", mode="guided-mutant", rules=("r1",), rule_numerics={"r1": "exact"})
    grown = m.with_variants([new])
    assert grown.variants == (*m.variants, new) and len(m.variants) == 3
    assert grown.variant("g0_v002") == new and m.find_variant("g0_v002") is None
    assert grown.graph("g0").extraction.distinct == m.graph("g0").extraction.distinct + 1
    assert grown.graph("g1") == m.graph("g1")  # (no extraction: nothing counted)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.variants = ()
    grown.save(tmp_path)
    assert load_manifest(tmp_path) == grown and not (tmp_path / "manifest.json.tmp").exists()
    assert m.only([new]).variants == (new,) and m.only([new]).graphs == m.graphs

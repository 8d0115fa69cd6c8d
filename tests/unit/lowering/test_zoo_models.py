"""Third-party models of the zoo (benchmarks/zoo/) that install here: Hugging Face transformers families load with
their own keyword inputs, capture, functionalize and get 32 distinct variants each (the rest, and torchvision/timm,
by `python benchmarks/zoo_generate.py`)."""
from __future__ import annotations

import pytest
from conftest import REPO

ZOO = REPO / "benchmarks" / "zoo"
# encoder, decoder (rotary + GQA, sliding window, MoE), encoder-decoder and vision families
FAMILIES = ["hf_bert", "hf_gpt2", "hf_llama", "hf_mistral", "hf_mixtral", "hf_t5", "hf_vit"]


@pytest.mark.slow  # ~25 s a model: Dynamo's trace of a transformers model, then saturation
@pytest.mark.parametrize("name", FAMILIES)
def test_transformers_family_gets_32_distinct_variants(name, tmp_path):
    pytest.importorskip("transformers")
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from eqsat_test.rewrite.saturate import Budget
    manifest = generate(ZOO / f"{name}.py", tmp_path / "bundle", GenerateOptions(variants=32, budget=Budget(seconds=4)))
    assert manifest.graphs and not manifest.graphs_left_out, manifest.graphs_left_out
    assert all(g.skipped_rewrites is None for g in manifest.graphs), [g.skipped_rewrites for g in manifest.graphs]
    variants = [v for v in manifest.variants if not v.seed]
    assert len({v.key for v in variants}) >= 32


@pytest.mark.slow  # ~40 s: Dynamo's trace of Mamba's sequential scan
def test_mamba_runs_vmap_as_captured_and_says_why_it_is_not_rewritten(tmp_path):
    """transformers' Mamba calls torch.vmap in its forward; Dynamo inlines it as transform-level calls (state, not
    values): the graph is not rewritten, and says so, and its seed program runs eagerly as the model does."""
    pytest.importorskip("transformers")
    import torch

    from eqsat_test.rewrite.generate import GenerateOptions, generate
    from eqsat_test.runners.protocol import load_module
    manifest = generate(ZOO / "hf_mamba.py", tmp_path / "bundle", GenerateOptions(variants=2))
    (g,) = manifest.graphs
    assert g.skipped_rewrites is not None and "functorch transform" in g.skipped_rewrites, g.skipped_rewrites
    seed = load_module(str(tmp_path / "bundle" / next(v for v in manifest.variants if v.seed).file))
    with torch.no_grad():
        out = seed.forward(*seed.get_inputs())
    assert torch.isfinite(out[0]).all()


def test_a_zoo_model_whose_library_is_missing_is_one_line(tmp_path):
    """A zoo file imports its library in a try block: without it, loading says so in one line (exit 4 at the CLI)."""
    from eqsat_test.lowering.load import BadInput, load_model
    src = (ZOO / "hf_bert.py").read_text().replace("from transformers import", "from transformers_not_installed import")
    (tmp_path / "m.py").write_text(src)
    with pytest.raises(BadInput) as e:
        load_model(tmp_path / "m.py")
    msg = str(e.value)
    assert "\n" not in msg and "needs transformers" in msg and "eqsat-test[zoo]" in msg


def test_there_are_thirty_zoo_models_across_three_libraries():
    files = sorted(ZOO.glob("*.py"))
    libs = {f.name.split("_")[0] for f in files}
    assert len(files) >= 30 and libs == {"hf", "tv", "timm"}


def test_model_outputs_are_judged_leaf_by_leaf():
    """ModelOutput (a dict and a dataclass), nested tuples, plain dataclasses: one wrong element in one leaf is
    found and named by its path; equal structures pass."""
    import dataclasses

    import torch

    from eqsat_test.runners.oracle.judge import judge
    transformers = pytest.importorskip("transformers")

    @dataclasses.dataclass
    class Plain:
        a: torch.Tensor
        b: tuple

    torch.manual_seed(0)
    x, y, z = torch.randn(4, 8), torch.randn(3), torch.randn(2, 2)
    outs = [transformers.modeling_outputs.CausalLMOutput(logits=x, hidden_states=(y, z)),
            {"logits": x, "past": ((y, z),)}, (x, (y, [z])), Plain(x, (y, z))]
    for ref in outs:
        same = judge(ref, ref, ref)
        assert same.ok, same.detail

    def bump(t):
        t = t.clone()
        t.view(-1)[1] *= 1.01
        return t
    bad = transformers.modeling_outputs.CausalLMOutput(logits=x, hidden_states=(y, bump(z)))
    v = judge(outs[0], bad, outs[0])
    assert not v.ok and "hidden_states" in (v.leaf or v.detail), (v.leaf, v.detail)


def test_a_librarys_custom_op_brings_its_import():
    """Mixtral's experts call torch.ops.transformers.grouped_mm_fallback: a variant module imports the module that
    registers it (else every program would fail in eager mode and the rules would be blamed)."""
    pytest.importorskip("transformers.integrations.moe")
    from eqsat_test.lowering.targets import defining_module
    assert defining_module("torch.ops.transformers.grouped_mm_fallback.default") == "transformers.integrations.moe"
    assert defining_module("torch.ops.aten.add.Tensor") is None

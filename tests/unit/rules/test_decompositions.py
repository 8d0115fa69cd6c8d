"""Decompositions of composite ops (rules/decompositions.py) and the compiler-stress family (rules/stress.py): reach, numerics classes, and variants of softmax, layer_norm and attention models."""
from __future__ import annotations

import pytest

from eqsat_test.rewrite.ruledsl import BUILTIN_RULES_DIR, load_rule_file

# composite ops (as the rules spell them) that must have a decomposition
COMPOSITES = {
    "softmax", "log_softmax", "softmin", "logsumexp", "layer_norm", "rms_norm", "group_norm",
    "batch_norm", "instance_norm", "local_response_norm", "gelu", "gelu_tanh", "silu", "mish",
    "hardswish", "hardsigmoid", "softplus", "logsigmoid", "selu", "celu", "elu", "glu",
    "leaky_relu", "hardtanh", "threshold", "sdpa", "linear", "conv2d", "conv1d", "conv3d",
    "conv_transpose2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_pool2d", "avg_pool2d",
    "interpolate", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "bce_with_logits",
    "kl_div", "cross_entropy", "margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "embedding", "repeat_interleave",
}


@pytest.fixture(scope="module")
def decompositions():
    return [r for f in sorted(BUILTIN_RULES_DIR.glob("decompositions*.py")) for r in load_rule_file(f)]


def test_at_least_30_composite_ops_are_decomposed(decompositions):
    names = [r.name for r in decompositions if r.family == "decomposition"]
    covered = {c for c in COMPOSITES if any(n.startswith(c + "_") for n in names)}
    assert len(covered) >= 30 and covered == COMPOSITES, sorted(COMPOSITES - covered)


def test_numerics_are_honest(decompositions):
    by = {r.name: r for r in decompositions}
    # reassociating decompositions are approximate; ones that are torch's own algorithm are exact
    assert by["softmax_dim_kw_is_stable_exp"].numerics == "approximate"
    assert by["sdpa_is_softmax_attention_float32"].numerics == "approximate"
    assert by["rms_norm_is_rsqrt_mean_square_rank3_float32"].numerics == "exact"
    assert sum(r.numerics == "approximate" for r in decompositions) > len(decompositions) / 3
    # composite ops that check their operands' shapes are only decomposed one way
    assert not by["batch_norm_eval_is_affine_rank4_float32"].bidirectional
    assert by["softmax_dim_kw_is_stable_exp"].bidirectional


def test_stress_family_covers_each_kind():
    stress = load_rule_file(BUILTIN_RULES_DIR / "stress.py")
    names = " ".join(r.name for r in stress)
    for kind in ("clone_after_", "contiguous_after_", "channels_last", "float64_round_trip",
                 "index_select", "gather", "partial", "broadcast_tensors", "contiguous_view"):
        assert kind in names, kind
    assert all(r.family == "stress" for r in stress)


MODELS = {
    "softmax": '''
import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
def get_inputs():
    return [torch.randn(4, 16)]
''',
    "layer_norm": '''
import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(16)
    def forward(self, x):
        return self.ln(x)
def get_inputs():
    return [torch.randn(2, 4, 16)]
''',
    "sdpa": '''
import torch
import torch.nn.functional as F
class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)
def get_inputs():
    return [torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16)]
''',
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_single_composite_models_give_16_variants(name, tmp_path):
    from eqsat_test.rewrite.coverage import coverage

    f = tmp_path / f"{name}.py"
    f.write_text(MODELS[name])
    cov = coverage(f, variants=16)
    assert not cov.error
    (g,) = cov.graphs
    assert g.num_ops == 1
    assert g.distinct_variants >= 16, (g.distinct_variants, g.families_fired)
    assert "decomposition" in g.families_fired

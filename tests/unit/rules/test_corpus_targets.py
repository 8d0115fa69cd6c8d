"""Rules for the corpus's last uncovered call targets (F.normalize, eval-mode rrelu, affine_grid), random ops named exactly, and rules that must not feed a `.view` a non-contiguous tensor."""
from __future__ import annotations

import importlib.util
import warnings

import pytest
import torch
import torch.nn.functional as F

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.program import UID_KW
from eqsat_test.lowering.targets import is_random
from eqsat_test.rewrite.compile_rules import compile_rule, compile_rules, pattern_ops
from eqsat_test.rewrite.rulecheck import check_rule, find_example
from eqsat_test.rewrite.ruledsl import BUILTIN_RULES_DIR, FLOATING, RuleError, Tensor, load_rule_file, make_rule

F_ = "torch.nn.functional."


@pytest.fixture(scope="module")
def more():
    return {r.name: r for r in load_rule_file(BUILTIN_RULES_DIR / "decompositions_more.py")}


# ---- random ops by exact name --------------------------------------------------------------------


def test_random_ops_are_named_exactly():
    # "normal" is random, "normalize" is not (a substring test took F.normalize for a random op,
    # which kept every rule off it)
    assert not is_random(F_ + "normalize")
    assert is_random("torch.normal") and is_random("Tensor.normal_")
    for name in ("torch.randn", "torch.rand_like", "torch.randint", "Tensor.random_", "Tensor.uniform_",
                 "torch.bernoulli", "torch.multinomial", F_ + "dropout", F_ + "dropout2d",
                 F_ + "alpha_dropout", F_ + "gumbel_softmax", "torch.randperm"):
        assert is_random(name), name
    for name in (F_ + "layer_norm", F_ + "batch_norm", "torch.nn.functional.local_response_norm",
                 "Tensor.norm", "torch.linalg.vector_norm", "torch.linalg.matrix_norm", "torch.operand"):
        assert not is_random(name), name


def test_rrelu_and_attention_are_random_only_for_some_arguments():
    rrelu = F_ + "rrelu"
    assert is_random(rrelu, (None,), {"lower": 0.1, "upper": 0.3, "training": True})
    assert is_random(rrelu, (None, 0.1, 0.3, True), {})
    assert not is_random(rrelu, (None,), {"training": False})
    assert not is_random(rrelu, (None, 0.1, 0.3), {})  # F.rrelu's default: training=False
    assert not is_random(rrelu)  # no call given: its default
    sdpa = "torch._C._nn.scaled_dot_product_attention"
    assert is_random(sdpa, (1, 2, 3), {"dropout_p": 0.1}) and is_random(sdpa, (1, 2, 3, None, 0.2), {})
    assert not is_random(sdpa, (1, 2, 3), {}) and not is_random(sdpa, (1, 2, 3), {"dropout_p": 0.0})
    mha = F_ + "multi_head_attention_forward"
    args = tuple(range(10))
    assert is_random(mha, args + (0.1,), {})  # training=True by default
    assert not is_random(mha, args + (0.1,), {"training": False})
    assert not is_random(mha, args + (0.0,), {"training": True})


def test_normalize_lifts_as_a_pure_op():
    class M(torch.nn.Module):
        def forward(self, x):
            return F.normalize(x, p=2.0, dim=1) + F.normalize(x, p=2.0, dim=1)

    (g,) = capture(M(), [torch.randn(4, 5)])
    prog = lift_fx(g.gm).program
    calls = [n for n in prog.nodes if n.name == F_ + "normalize"]
    assert calls and all(k != UID_KW for n in calls for k, _ in n.kwargs)
    assert len(calls) == 1  # two equal calls are one node: nothing random about them


# ---- the corpus's call targets have rules ---------------------------------------------------------


def test_normalize_rrelu_and_affine_grid_have_rules(more):
    compiled, errors = compile_rules(list(more.values()))
    assert not errors, errors
    lhs = set().union(*(pattern_ops(c.lhs) for c in compiled))
    for target in ("normalize", "rrelu", "affine_grid"):
        assert F_ + target in lhs, target
    by = {r.name: r for r in more.values()}
    assert by["normalize_is_divide_by_clamped_norm"].numerics == "exact"  # torch's own algorithm
    assert by["normalize_l2_is_rsqrt_form"].numerics == "approximate"
    assert by["rrelu_default_is_leaky_relu"].numerics == "exact"
    assert by["affine_grid_of_view_is_broadcast_base_grid_float32"].numerics == "approximate"


@pytest.mark.parametrize("name", ["normalize_is_divide_by_clamped_norm", "rrelu_eval_is_leaky_relu_0",
                                  "affine_grid_of_view_is_broadcast_base_grid_float64"])
def test_new_rules_pass_the_checker(more, name):
    res = check_rule(more[name])
    assert res.ok, res.line()


@pytest.mark.parametrize("dt,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_affine_grid_decomposition_matches_torch(more, dt, tol):
    rule = more[f"affine_grid_of_view_is_broadcast_base_grid_{str(dt).split('.')[-1]}"]
    g = torch.Generator().manual_seed(0)
    for n, h, w in ((1, 1, 1), (2, 1, 5), (3, 4, 1), (2, 7, 6), (4, 56, 56)):
        t = torch.randn(n, 6, generator=g, dtype=dt)
        lhs, rhs = rule.fn(t=t, n=n, c=3, h=h, w=w)
        assert rhs.shape == lhs.shape == (n, h, w, 2)
        torch.testing.assert_close(rhs, lhs, atol=tol, rtol=tol)


def test_rrelu_in_eval_mode_is_bitwise_leaky_relu(more):
    x = torch.randn(1000, dtype=torch.float32)
    for r in more.values():
        if r.name.startswith("rrelu_"):
            lhs, rhs = r.fn(x=x)
            assert torch.equal(lhs, rhs), r.name


def test_in_place_masked_fill_cannot_be_in_a_rule():
    """Why Tensor.masked_fill_ (nn.MultiheadAttention's float key_padding_mask) has no rule: a
    rule's in-place op is lifted as a unique node, and the compiler refuses those. Its graph is not
    rewritten at all (`mutating`); lifting an in-place op on a fresh tensor as its out-of-place
    form would cover it."""
    def body(x, m):
        return x.masked_fill_(m, -1.0), torch.where(m, -1.0, x)

    r = make_rule("masked_fill_inplace", body,
                  {"x": Tensor(rank=2, dtype=FLOATING), "m": Tensor(rank=2, dtype="bool")},
                  family="spelling", numerics="exact")
    with pytest.raises(RuleError, match="in-place"):
        compile_rule(r)


# ---- variants never feed a `.view` a non-contiguous tensor --------------------------------------
# The e-graph equates values, not strides: a rule whose rhs is a strided view of what its lhs
# computes contiguously (or whose rhs is the same e-node as a program's own `.contiguous()`) lets
# extraction hand a program's `.view(...)` a tensor it cannot view.


@pytest.fixture(scope="module")
def layout_rules():
    return [r for f in ("stress.py", "linalg.py", "concat.py", "schemas.py", "decompositions_more.py")
            for r in load_rule_file(BUILTIN_RULES_DIR / f)]


@pytest.mark.slow  # a subprocess run or many compiles: seconds to minutes
def test_no_rule_makes_a_contiguous_result_strided(layout_rules):
    bad = []
    for r in layout_rules:
        ex = find_example(r, samples=8)
        if ex is None:
            continue
        inputs = {k: v.contiguous() if isinstance(v, torch.Tensor) else v for k, v in ex.items()}
        with warnings.catch_warnings():  # (losses warn of broadcasting targets)
            warnings.simplefilter("ignore")
            lhs, rhs = r.fn(**inputs)
        if not (isinstance(lhs, torch.Tensor) and isinstance(rhs, torch.Tensor)):
            continue
        if lhs.is_contiguous() and not rhs.is_contiguous():
            bad.append(f"{r.name} (forward)")
        if r.bidirectional and rhs.is_contiguous() and not lhs.is_contiguous():
            bad.append(f"{r.name} (backward)")
    # (a binary op of two permuted operands that broadcast may pick either layout: left alone)
    bad = [b for b in bad if not (b.startswith("schema_permute") and "_through_" in b)]
    assert not bad, bad


def test_contiguous_copies_are_not_spelled_like_a_programs_own(layout_rules):
    compiled, errors = compile_rules([r for r in layout_rules if r.name.startswith("stress_contiguous_after_")])
    assert compiled and not errors
    for c in compiled:
        assert "Tensor.contiguous" not in pattern_ops(c.rhs), c.name


GPT2_LIKE = '''
import torch
import torch.nn.functional as F


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = torch.nn.Linear(16, 48)
        self.c_proj = torch.nn.Linear(16, 16)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, 4, 4).transpose(1, 2)
        k = k.view(b, t, 4, 4).transpose(1, 2)
        v = v.view(b, t, 4, 4).transpose(1, 2)
        att = F.softmax((q @ k.transpose(-2, -1)) * 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


def get_inputs():
    return [torch.randn(2, 5, 16)]
'''


@pytest.mark.slow
def test_variants_of_an_attention_block_run_eagerly(tmp_path):
    """`(att @ v).transpose(1, 2).contiguous().view(b, t, c)`: no variant views the transpose."""
    from eqsat_test.rewrite.generate import GenerateOptions, generate

    model = tmp_path / "gpt2_like.py"
    model.write_text(GPT2_LIKE)
    out = tmp_path / "bundle"
    generate(model, out, GenerateOptions(variants=16))
    files = sorted(out.glob("g0_v*.py"))
    assert len(files) >= 8
    failed = []
    for f in files:
        spec = importlib.util.spec_from_file_location(f.stem, f)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        try:
            with torch.no_grad():
                mod.Model()(*mod.get_inputs())
        except RuntimeError as e:
            failed.append(f"{f.name}: {str(e).splitlines()[0]}")
    assert not failed, failed

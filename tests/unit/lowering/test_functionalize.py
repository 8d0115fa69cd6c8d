"""Functionalization before lifting: in-place ops become out-of-place, writes to inputs become effects written
back at the end, aliasing that would make that unsound blocks the graph with the op named; and variants of
graphs with mutation keep the effects (the written inputs and buffers equal eager's)."""
from __future__ import annotations

import copy
import importlib.util

import pytest
import torch
from conftest import TEST_MODELS

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.functionalize import functionalize
from eqsat_test.runners.protocol import load_module

MUT = TEST_MODELS / "mutation"


def _model(name: str):
    spec = importlib.util.spec_from_file_location(f"mut_{name}", MUT / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    return mod.Model().eval(), mod.get_inputs()


class SetItems(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        y[:, 1:3] = 0.5
        y[0] = x[1]
        y[..., -1] += 1
        y[y > 1] = -1.0
        y[1, ::2] *= 3
        return y


class WriteThroughView(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        y[0].add_(1)  # a write through a direct view reaches y
        return y, torch.nn.functional.relu(y, inplace=True) - 1


class InputSlice(torch.nn.Module):
    def forward(self, cache, k):
        cache[:, 2:4] = k  # a cache written in place, as decoders keep theirs
        return cache.sum(-1)


class GatherThenWrite(torch.nn.Module):
    def forward(self, x, idx):
        h = x.reshape(-1, 4)
        g = h[idx]  # indexing by a tensor gathers a copy: writing it leaves h alone
        g.masked_fill_(g > 0.5, 0.0)
        c = h[:, idx[:2]]
        c.mul_(3)
        return h.sum(-1), g * 2, c


def _check(module, inputs):
    """The functionalized graph's outputs equal the graph's, its trailing outputs equal the inputs the graph
    wrote, and it writes nothing itself."""
    (g,) = capture(copy.deepcopy(module), tuple(x.clone() for x in inputs))
    f = functionalize(g.gm)
    assert not f.blocked, f.blocked
    eager_in = [x.clone() for x in g.inputs]
    pure_in = [x.clone() for x in g.inputs]
    ref = g.gm(*eager_in)
    got = f.gm(*pure_in)
    k = len(got) - len(f.effects)
    assert k == len(ref) and all(torch.equal(a, b) for a, b in zip(ref, got[:k]))
    names = list(g.input_names)
    for j, name in enumerate(f.effects):
        assert torch.equal(eager_in[names.index(name)], got[k + j]), name
    assert all(torch.equal(a, b) for a, b in zip(pure_in, g.inputs)), "the functional graph wrote an input"
    assert not any(n.op == "call_method" and str(n.target).endswith("_") for n in f.gm.graph.nodes)
    return f, g


@pytest.mark.parametrize("name", ["input_mutation", "bn_train", "resnet_blocks"])
def test_model_files_functionalize(name):
    f, g = _check(*_model(name))
    assert f.rewritten >= 2
    if name == "input_mutation":
        assert set(f.effects) == {n for n in g.input_names if "state" in n or "count" in n or n == "l_x_"}
    if name == "bn_train":
        assert sorted(f.effects) == sorted(n for n in g.input_names if "running" in n)


@pytest.mark.parametrize("module,shapes", [(SetItems(), [(4, 5)]), (WriteThroughView(), [(3, 3)]),
                                           (InputSlice(), [(2, 6), (2, 2)]), (GatherThenWrite(), [(3, 4)])])
def test_writes_into_tensors_and_views(module, shapes):
    torch.manual_seed(0)
    inputs = [torch.randn(*s) for s in shapes]
    if isinstance(module, GatherThenWrite):
        inputs.append(torch.tensor([2, 0, 2, 1]))
    f, _ = _check(module, inputs)
    if isinstance(module, InputSlice):
        assert f.effects == ("l_cache_",)


class ViewReadAfterWrite(torch.nn.Module):
    def forward(self, x):
        y = x * 2
        flat = y.view(-1)  # an alias taken before the write ...
        y.add_(1)
        return flat * 3  # ... and read after it: it sees the write


class WriteThroughInputView(torch.nn.Module):
    def forward(self, x):
        x.view(-1).add_(1)
        return x * 2


class DtypeViewReadAfterWrite(torch.nn.Module):
    def forward(self, x):
        bits = x.view(torch.int32)  # the same storage read as another dtype: a view, not a cast's copy
        x.mul_(2)
        return bits + 1


class RandomFill(torch.nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        y.uniform_()
        return x + y


@pytest.mark.parametrize("module,says", [(ViewReadAfterWrite(), "shares storage"),
                                         (WriteThroughInputView(), "through a view of the input"),
                                         (DtypeViewReadAfterWrite(), "shares storage"),
                                         (RandomFill(), "random in-place fill")])
def test_unsound_cases_block_with_the_op_named(module, says):
    (g,) = capture(module, (torch.randn(3, 4),))
    f = functionalize(g.gm)
    assert f.gm is None and says in f.blocked, f.blocked


def _generate(name, tmp_path, n):
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    return generate(MUT / f"{name}.py", tmp_path / name, GenerateOptions(variants=n))


@pytest.mark.parametrize("name", ["input_mutation", "bn_train"])
def test_variants_keep_the_writes_to_inputs_and_buffers(name, tmp_path):
    """Each variant's `program`, run on fresh copies of the inputs, leaves the inputs (and running statistics)
    as the model in eager mode leaves them (the seed also returns what it returns); `forward` leaves its
    inputs alone and returns the written values after the outputs."""
    manifest = _generate(name, tmp_path, 12)
    (graph,) = manifest.graphs
    assert graph.effects and graph.skipped_rewrites is None, graph
    variants = [v for v in manifest.variants if not v.seed]
    assert len(variants) >= 4
    # The model in eager mode from the state the bundle holds (loading ran it once: its writes are in there)
    eager_module, _ = _model(name)
    seed_mod = load_module(str(tmp_path / name / next(v for v in manifest.variants if v.seed).file))
    state = dict(zip(seed_mod.INPUT_NAMES, [x.clone() for x in seed_mod.get_inputs()]))
    for k, b in eager_module.named_buffers():
        b.copy_(state[f"l_self_buffers_{k}_"])
    eager_inputs = [state[k] for k in state if not k.startswith("l_self_")]
    with torch.no_grad():
        ref = eager_module(*eager_inputs)
    ref = (ref,) if isinstance(ref, torch.Tensor) else ref
    # what the model wrote: its inputs, and its buffers, by the names Dynamo gives them
    written = {k: v for k, v in state.items() if not k.startswith("l_self_")}
    written.update({f"l_self_buffers_{k}_": b for k, b in eager_module.named_buffers()})
    for v in [next(v for v in manifest.variants if v.seed)] + variants:
        mod = load_module(str(tmp_path / name / v.file))
        args = [x.clone() for x in mod.get_inputs()]
        with torch.no_grad():
            out = mod.program(*args)
        if v.seed:  # (a variant's outputs may differ where its rules are ieee-edge or approximate: not here)
            for a, b in zip(ref, out):
                torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
        for pname, value in zip(mod.INPUT_NAMES, args):
            if pname in graph.effects:
                torch.testing.assert_close(value, written[pname], rtol=1e-4, atol=1e-5, msg=f"{v.id}: {pname}")
        before = [x.clone() for x in mod.get_inputs()]
        args = mod.get_inputs()
        with torch.no_grad():
            both = mod.forward(*args)
        assert all(torch.equal(a, b) for a, b in zip(before, args)), "forward wrote its inputs"
        assert len(both) == len(ref) + len(graph.effects)
        # a training step through it: no tensor autograd saved (BatchNorm saves its running stats) is written
        leaves = [x.detach().clone().requires_grad_(x.is_floating_point() and n not in graph.effects)
                  for n, x in zip(mod.INPUT_NAMES, mod.get_inputs())]
        losses = [o.float().sum() for o in mod.forward(*leaves)[:len(ref)] if o.requires_grad]
        if losses:
            sum(losses).backward()
            assert all(x.grad is not None for x in leaves if x.requires_grad), v.id


def test_resnet_blocks_with_inplace_relu_get_32_variants(tmp_path):
    manifest = _generate("resnet_blocks", tmp_path, 32)
    (graph,) = manifest.graphs
    assert graph.skipped_rewrites is None and graph.functionalized >= 5
    variants = [v for v in manifest.variants if not v.seed]
    assert len({v.key for v in variants}) >= 32


OPAQUE = '''import torch

def make():
    def scale(x):
        return x * 3
    return torch.compiler.allow_in_graph(scale)

scale = make()

class Model(torch.nn.Module):
    def forward(self, x):
        return scale(torch.relu(x)) + 1

def get_inputs():
    return [torch.randn(4, 4)]
'''


def test_a_call_no_import_reaches_is_one_line_naming_it(tmp_path):
    """A graph that calls a local function (allow_in_graph) cannot be written as a standalone program: it is left
    out with the construct named, and a model with nothing else to test is bad input (one line), no internal error."""
    from eqsat_test.lowering.load import BadInput
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    (tmp_path / "m.py").write_text(OPAQUE)
    with pytest.raises(BadInput) as e:
        generate(tmp_path / "m.py", tmp_path / "b", GenerateOptions(variants=2, rules=(str(TEST_MODELS / "e2e_rules"),)))
    assert "make.<locals>.scale" in str(e.value) and "\n" not in str(e.value)


def test_aten_overloads_have_importable_names():
    from eqsat_test.lowering.targets import name_of, resolve
    for op in (torch.ops.aten._native_batch_norm_legit_functional.default, torch.ops.aten.add.Tensor,
               torch.ops.aten.add):
        assert resolve(name_of(op)) is op

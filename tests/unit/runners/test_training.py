"""Training mode: the training step (runners/oracle/grad.py), its verdict split into forward and gradient
(runners/exec/training.py), the backward-only fault backends (examples/backends/grad_faulty_backends.py)
and the records, triage and spec that carry it. In-process with AOTAutograd's nop compilers: no Inductor
compile, so these stay fast."""
from __future__ import annotations

import importlib.util
import math

import pytest
import torch
import torch.nn.functional as F
from conftest import REPO

from eqsat_test.codegen_templates import render
from eqsat_test.runners.exec.training import Training, judge_step
from eqsat_test.runners.findings.triage import triage
from eqsat_test.runners.oracle.grad import (
    GRADS,
    OUTPUTS,
    GradProgram,
    cotangent,
    grad_index_sources,
    input_of,
    is_random,
    part_of,
    refused_inputs,
    written_inputs,
)
from eqsat_test.runners.oracle.inputs import InputSet
from eqsat_test.runners.oracle.reference import eager_reference
from eqsat_test.runners.records import FindingKind, Task, is_compiler_bug


def _faults():
    spec = importlib.util.spec_from_file_location("grad_faulty_backends",
                                                  REPO / "examples" / "backends" / "grad_faulty_backends.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FAULTS = _faults()


def mlp(w1, b1, x, w2, b2):
    h = F.relu(F.linear(x, w1, b1))
    return (F.linear(torch.sigmoid(h) * h, w2, b2).tanh(),)


def mlp_inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(16, 8, generator=g), torch.randn(16, generator=g), torch.randn(4, 8, generator=g),
            torch.randn(3, 16, generator=g), torch.randn(3, generator=g))


def _training(fn, inputs, names=("w1", "b1", "x", "w2", "b2")) -> Training:
    def no_indices(*a):
        return {}
    return Training(GradProgram(fn, written_inputs(fn, inputs)), grad_index_sources(no_indices),
                    is_random(fn, inputs), tuple(names))


def _judge(fn, backend, inputs=None):
    inputs = inputs or mlp_inputs()
    t = _training(fn, inputs)
    r = eager_reference(t.step, t.index_sources, InputSet("given", inputs))
    torch._dynamo.reset()
    got = t.compiled(torch.compile(fn, backend=backend))(*inputs)
    return judge_step(r, got, t)


def test_step_gradients_are_autograd_with_the_cotangents():
    inputs = mlp_inputs()
    out, grads = GradProgram(mlp)(*inputs)
    xs = [x.clone().requires_grad_() for x in inputs]
    (y,) = mlp(*xs)
    (y * cotangent(y, 0)).sum().backward()
    assert torch.equal(out[0], y.detach())
    for g, x in zip(grads, xs):
        torch.testing.assert_close(g, x.grad)


def test_cotangent_is_fixed_random_and_exact_in_every_float_dtype():
    leaf = torch.empty(64, 3)
    c = cotangent(leaf, 0)
    assert torch.equal(c, cotangent(leaf, 0)) and not torch.equal(c, cotangent(leaf, 1))
    assert c.std() > 0.5 and (c < 0).any() and (c > 0).any()  # not ones: a sign or permutation error shows
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        assert torch.equal(cotangent(leaf.to(dt), 0).double(), c.double())


def test_inputs_that_are_not_differentiated():
    def f(x, idx, stats):
        stats.mul_(0.9)  # a write into an input, as BatchNorm's running statistics in training mode
        return x[idx] * 2, stats.sum() + x.sum()
    inputs = (torch.randn(5), torch.tensor([0, 2]), torch.randn(3))
    assert written_inputs(f, inputs) == (2,)
    out, grads = GradProgram(f, (2,))(*inputs)
    assert grads[1] is None and grads[2] is None  # an integer input; a written one
    assert grads[0].shape == (5,)


def test_unused_input_gets_zeros_and_paths_name_their_part():
    def f(x, y):
        return (x * 3,)
    _, grads = GradProgram(f)(torch.randn(3), torch.randn(2))
    assert torch.equal(grads[1], torch.zeros(2))
    assert part_of(OUTPUTS + "[0]") == "forward" and part_of(GRADS + "[3]") == "gradient" and part_of(None) is None
    assert input_of(GRADS + "[3]") == 3 and input_of(GRADS + "[12][0]") == 12 and input_of(OUTPUTS + "[1]") is None


def test_random_program_reseeds_each_step():
    def f(x):
        return (F.dropout(x, 0.5, training=True) * 2,)
    x = torch.randn(64)
    assert is_random(f, (x,))
    a, b = GradProgram(f)(x), GradProgram(f)(x)
    assert torch.equal(a[0][0], b[0][0]) and torch.equal(a[1][0], b[1][0])
    assert not is_random(mlp, mlp_inputs())


def test_identity_is_never_flagged():
    for backend in (FAULTS.identity, "aot_eager"):
        for seed in range(3):
            v, extra = _judge(mlp, backend, mlp_inputs(seed))
            assert v.ok, v.detail
            assert extra == {}


@pytest.mark.parametrize("name", sorted(FAULTS.FAULTS))
def test_each_backward_fault_is_a_gradient_failure(name):
    FAULTS.FIRED.clear()
    v, extra = _judge(mlp, FAULTS.FAULTS[name])
    assert FAULTS.FIRED == [True]
    assert not v.ok, v.detail
    assert extra["part"] == "gradient"
    assert extra["grad_input"] in ("w1", "b1", "x", "w2", "b2")
    assert v.detail.startswith(f"gradient of {extra['grad_input']}: ")


def test_a_forward_fault_is_a_forward_failure():
    def wrong_forward(gm, ex):
        def run(*a):
            out = gm(*a)
            return [out[0] * 1.01, *out[1:]] if isinstance(out, (list, tuple)) else out * 1.01
        return run
    v, extra = _judge(mlp, wrong_forward)
    assert not v.ok and extra["part"] == "forward"


def test_random_program_whose_streams_differ_is_not_judged():
    def f(x):
        return (F.dropout(x, 0.5, training=True) + x,)

    def other_stream(gm, ex):  # the compiled code draws first: another mask
        def run(*a):
            torch.rand(7)
            return gm(*a)
        return run
    x = (torch.randn(256),)
    v, _ = _judge(f, other_stream, x)
    assert v.ok and v.kind == "nondeterministic", v.detail
    v, _ = _judge(f, "aot_eager", x)  # the same stream: judged, and it agrees
    assert v.ok and v.kind == "match", v.detail


def test_repro_step_is_the_oracle_step():
    """The standalone repro's training step (codegen_templates/repro_grad_main.py.j2) computes what
    GradProgram does: the same cotangents, leaves and gradients."""
    from eqsat_test.runners.oracle.grad import COTANGENT_SEED, GRAD_SEED
    text = render("repro_grad_main.py.j2", kind="grad-miscompile", backend="inductor", options={}, device="cpu",
                  rules=[], inductor_config={}, context_lines=[], extreme_inputs=False, skip=[1],
                  grad_seed=GRAD_SEED, cotangent_seed=COTANGENT_SEED, backend_expr='"inductor"', backend_label="inductor", backend_prelude="")
    ns: dict = {"torch": torch}
    exec(compile(text.split('if __name__ == "__main__":')[0], "repro", "exec"), ns)

    def f(x, stats, w):
        stats.add_(1)
        return torch.tanh(x @ w), (x * 2).sum()
    inputs = (torch.randn(4, 5), torch.randn(3), torch.randn(5, 2))
    a = ns["_step"](f)(*[t.clone() for t in inputs])
    b = GradProgram(f, (1,))(*[t.clone() for t in inputs])
    for (x, y) in zip(torch.utils._pytree.tree_leaves(a), torch.utils._pytree.tree_leaves(b)):
        assert (x is None and y is None) or torch.equal(x, y)
    assert a[1][1] is None and b[1][1] is None


def test_records_and_triage_carry_training_mode():
    assert is_compiler_bug(FindingKind.GRAD_MISCOMPILE)
    t = Task(id="a", variant="v", file="f.py", backend="inductor", grad=True)
    assert Task.from_dict(t.to_dict()) == t and t.to_dict()["grad"] is True
    tr = triage({"kind": "grad-miscompile", "backend": "inductor", "device": "cpu", "grad_stage": "aot-autograd",
                 "detail": "gradient of w: [1][0] float32[3]: 1 exceed the fp64 bound"})
    assert tr["class"] == "accuracy" and tr["stage"] == "backward" and tr["component"] == "aot_autograd"
    assert tr["backward_stage"] == "aot-autograd" and "module: aotdispatch" in tr["labels"]
    tr = triage({"kind": "grad-miscompile", "backend": "inductor", "device": "cpu", "grad_stage": "inductor-backward",
                 "detail": "x"})
    assert tr["component"] == "inductor" and tr["subclass"] == "gradient-numerical"


def test_spec_grad_true_runs_every_job_with_grad(tmp_path):
    from eqsat_test.runners.campaign.spec import load_spec
    (tmp_path / "m.py").write_text("")
    (tmp_path / "s.toml").write_text('models = ["m.py"]\ngrad = true\nrun_args = ["--no-sweep"]\n')
    spec = load_spec(tmp_path / "s.toml")
    assert spec.grad and spec.run_args == ["--no-sweep", "--grad"]
    (tmp_path / "t.toml").write_text('models = ["m.py"]\n')
    assert not load_spec(tmp_path / "t.toml").grad and load_spec(tmp_path / "t.toml").run_args == []
    (tmp_path / "u.toml").write_text('models = ["m.py"]\ngrad = "yes"\n')
    with pytest.raises(Exception, match="grad must be true or false"):
        load_spec(tmp_path / "u.toml")


def test_unsound_check_blames_only_rules_whose_gradients_are_exact(tmp_path):
    from eqsat_test.lowering.manifest import Manifest, ManifestRules, Variant
    from eqsat_test.runners.checks.unsound import unsound_verdict
    x = torch.tensor([0.0, 1.0, -1.0])
    seed = ((x.relu(),), (torch.tensor([0.0, 1.0, 0.0]),))
    variant = ((x.clamp(min=0),), (torch.tensor([1.0, 1.0, 0.0]),))  # the gradient at the tie differs
    torch.save(seed, tmp_path / "s.pt")
    torch.save(variant, tmp_path / "v.pt")
    v = Variant("g0_v001", "g0", "g0_v001.py", rules=("relu_is_clamp_min0",))
    edge = Manifest(rules=ManifestRules(numerics={"relu_is_clamp_min0": "exact"}, grad={"relu_is_clamp_min0": "edge"}))
    exact = Manifest(rules=ManifestRules(numerics={"relu_is_clamp_min0": "exact"}, grad={"relu_is_clamp_min0": "exact"}))
    assert unsound_verdict(tmp_path / "s.pt", tmp_path / "v.pt", v, edge) is None
    bad = unsound_verdict(tmp_path / "s.pt", tmp_path / "v.pt", v, exact)
    assert bad is not None and part_of(bad.leaf) == "gradient"
    assert not math.isnan(bad.max_abs_err)


def test_inputs_an_op_refuses_to_differentiate():
    def f(x, y, pos_weight):
        return (F.binary_cross_entropy_with_logits(x, y, pos_weight=pos_weight),)
    inputs = (torch.randn(4, 3), torch.rand(4, 3), torch.rand(3))
    assert refused_inputs(f, inputs) == (2,)
    assert refused_inputs(mlp, mlp_inputs()) == ()
    _, grads = GradProgram(f, (2,))(*inputs)
    assert grads[2] is None and grads[0] is not None and grads[1] is not None


def test_batch_norm_in_training_mode_writes_its_running_stats():
    """BatchNorm's kernel writes the running statistics through the data pointer (the version counter may not
    move): found by value, left out of the gradients, and the step runs."""
    def f(x, rm, rv, w, b):
        return (F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1),)
    inputs = (torch.randn(8, 4), torch.zeros(4), torch.ones(4), torch.rand(4), torch.rand(4))
    skip = written_inputs(f, inputs)
    assert skip == (1, 2)
    _, grads = GradProgram(f, skip)(*inputs)
    assert grads[1] is None and grads[2] is None and all(grads[k] is not None for k in (0, 3, 4))

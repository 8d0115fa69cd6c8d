"""Created tensors follow the program's device: every torch factory call an emitted module makes (from the model
or from a rule's right side) names DEVICE, so a variant run on a GPU never mixes devices; and an eager failure
of that kind is the emitter's (emit-error), never an unsound rewrite."""
from __future__ import annotations

import ast

import pytest
import torch

from eqsat_test.lowering.capture import capture
from eqsat_test.lowering.emit import FACTORIES, emit_module
from eqsat_test.lowering.lift import lift_fx
from eqsat_test.lowering.lower import to_fx
from eqsat_test.runners.checks.unsound import eager_failure_kind
from eqsat_test.runners.protocol import load_module
from eqsat_test.runners.records import FindingKind


class Makes(torch.nn.Module):
    def forward(self, x):
        n = x.shape[-1]
        idx = torch.arange(n - 1, -1, -1)
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        y = x.index_select(-1, idx) + torch.zeros(x.shape) + torch.full((n,), 0.5)
        y = y + torch.tensor(2.0) * torch.linspace(0, 1, n)
        return y @ mask.float(), torch.eye(n) + torch.randn(n, n) * 0


def factory_calls(source: str) -> list[ast.Call]:
    """The torch.<factory>(...) calls of a module's source."""
    return [c for c in ast.walk(ast.parse(source)) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
            and isinstance(c.func.value, ast.Name) and c.func.value.id == "torch" and c.func.attr in FACTORIES]


def device_of(call: ast.Call) -> str | None:
    return next((ast.unparse(k.value) for k in call.keywords if k.arg == "device"), None)


def _emit(module, inputs, tmp_path):
    (g,) = capture(module, inputs)
    lifted = lift_fx(g.gm)
    gm = to_fx(lifted.program, lifted.input_names)
    src = emit_module(gm, title="t", inputs_file="in.pt", input_names=list(lifted.input_names))
    torch.save(list(g.inputs) + list(lifted.constants.values()), tmp_path / "in.pt")
    (tmp_path / "m.py").write_text(src)
    return src, load_module(str(tmp_path / "m.py"))


def test_every_created_tensor_is_made_on_the_programs_device(tmp_path):
    x = torch.randn(3, 5)
    src, mod = _emit(Makes(), (x,), tmp_path)
    calls = factory_calls(src)
    assert len(calls) >= 6 and all(device_of(c) == "DEVICE" for c in calls), src
    torch.manual_seed(0)
    ref = Makes()(x)
    got = mod.forward(*mod.get_inputs())
    assert all(torch.equal(a, b) for a, b in zip(ref, got))
    # On another device (meta: checkable on any machine), a tensor left on the CPU would raise.
    mod.DEVICE = torch.device("meta")
    out = mod.forward(*mod.get_inputs(torch.device("meta")))
    assert all(o.device.type == "meta" for o in out)


class UsesRulesThatMake(torch.nn.Module):
    """Ops that rules of the library rewrite into factory calls (flip -> index_select(arange), one_hot ->
    comparison with arange, cumsum -> matmul with a triangle of ones, zeros_like -> zeros)."""

    def forward(self, x, i):
        a = x.flip(0) + torch.zeros_like(x) + torch.ones_like(x)
        b = x.cumsum(-1)
        c = torch.nn.functional.one_hot(i, 6).float()
        return a * b, c


def test_variants_made_by_the_rule_library_keep_created_tensors_on_device(tmp_path):
    from eqsat_test.rewrite.generate import GenerateOptions, generate
    model = tmp_path / "model.py"
    model.write_text("import torch\n" + "\n".join(__import__("inspect").getsource(UsesRulesThatMake).splitlines())
                     .replace("class UsesRulesThatMake", "class Model") + "\n\n"
                     "def get_inputs():\n    torch.manual_seed(0)\n"
                     "    return [torch.randn(4, 4), torch.randint(0, 6, (5,))]\n")
    manifest = generate(model, tmp_path / "bundle", GenerateOptions(variants=48))
    made = 0
    for v in manifest.variants:
        path = tmp_path / "bundle" / v.file
        calls = factory_calls(path.read_text())
        made += bool(calls)
        assert all(device_of(c) == "DEVICE" for c in calls), (v.id, [ast.unparse(c) for c in calls])
        mod = load_module(str(path))
        mod.DEVICE = torch.device("meta")
        try:
            mod.forward(*mod.get_inputs(torch.device("meta")))
        except Exception as e:  # some ops have no meta kernel; a device mix is what must not happen
            assert eager_failure_kind(str(e), False) != FindingKind.EMIT_ERROR and "expected device" not in str(e), \
                (v.id, e)
    assert made >= 1, "no variant created a tensor: the test would prove nothing"


@pytest.mark.parametrize("message,seed,kind", [
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", False,
     FindingKind.EMIT_ERROR),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", True,
     FindingKind.EMIT_ERROR),
    ("mat1 and mat2 shapes cannot be multiplied (3x4 and 5x6)", False, FindingKind.UNSOUND_REWRITE),
    ("index 7 is out of bounds for dimension 0 with size 4", True, FindingKind.SEED_ERROR),
])
def test_a_device_mix_is_the_emitters_fault_not_the_rules(message, seed, kind):
    assert eager_failure_kind(message, seed) == kind


@pytest.mark.gpu
def test_created_tensors_follow_a_cuda_program(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    x = torch.randn(3, 5)
    _, mod = _emit(Makes(), (x,), tmp_path)
    mod.DEVICE = torch.device("cuda")
    out = mod.forward(*mod.get_inputs(torch.device("cuda")))
    assert all(o.is_cuda for o in out)

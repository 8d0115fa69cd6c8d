"""Names for FX call targets: `operator.add`, `torch.add`, `Tensor.add`, and back to callables."""
from __future__ import annotations

import importlib
import operator

import torch

_MODULE_ALIASES = {"_operator": "operator", "torch._C._VariableFunctions": "torch",
                   "torch._tensor": "torch"}
_SEARCH = ("torch", "torch.nn.functional", "operator", "math", "torch.special", "torch.linalg",
           "torch.fft", "torch._C._nn", "torch._C._linalg", "torch._C._special", "torch._C", "builtins")


def resolve(name: str):
    """The callable a target name stands for; `Tensor.x` names a method (returns None)."""
    if name.startswith("Tensor."):
        return None
    if name.startswith("torch.ops."):  # an ATen operator overload: torch.ops.<namespace>.<op>.<overload>
        obj = torch.ops
        for part in name.split(".")[2:]:
            obj = getattr(obj, part)
        return obj
    mod, _, attr = name.rpartition(".")
    obj = importlib.import_module(mod)
    return getattr(obj, attr)


_NAMES: dict = {}  # target -> name_of(target): lowering a program resolves the same few targets thousands of times


def name_of(target) -> str | None:
    """An importable dotted name for an FX call_function target, or None when it has none."""
    try:
        return _NAMES[target]
    except (KeyError, TypeError):  # (TypeError: an unhashable target)
        pass
    name = _name_of(target)
    try:
        _NAMES[target] = name
    except TypeError:
        pass
    return name


def _name_of(target) -> str | None:
    if isinstance(target, str):
        return f"Tensor.{target}"
    if isinstance(target, torch._ops.OpOverload):  # torch.ops.aten.<op>.<overload>: importable through torch
        ns, _, op = target._schema.name.partition("::")
        return f"torch.ops.{ns}.{op}.{target._overloadname}"
    if isinstance(target, torch._ops.OpOverloadPacket):
        ns, _, op = target._qualified_op_name.partition("::")
        return f"torch.ops.{ns}.{op}"
    mod = getattr(target, "__module__", None)
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    candidates = []
    if mod and qual and "<" not in qual:
        candidates.append(f"{_MODULE_ALIASES.get(mod, mod)}.{qual}")
    short = getattr(target, "__name__", None)
    if short:
        candidates += [f"{m}.{short}" for m in _SEARCH]
    for c in candidates:
        try:
            if resolve(c) is target:
                return c
        except (ImportError, AttributeError, ValueError):
            continue
    return None


_BUILTIN_NAMESPACES = ("aten", "prims", "quantized", "higher_order", "_c10d_functional", "c10d_functional")


def defining_module(name: str) -> str | None:
    """The Python module that registers a custom operator `torch.ops.<ns>.<op>...` (a library's own op, such as
    transformers' grouped_mm_fallback): a program that calls it imports that module first. None for ATen's
    and other built-in namespaces, and where the op's definition is not known."""
    parts = name.split(".")
    if len(parts) < 4 or parts[:2] != ["torch", "ops"] or parts[2] in _BUILTIN_NAMESPACES:
        return None
    try:
        from torch._library.custom_ops import OPDEFS  # (torch's registry of torch.library.custom_op definitions)
        opdef = OPDEFS.get(f"{parts[2]}::{parts[3]}")
        mod = getattr(getattr(opdef, "_init_fn", None), "__module__", None)
    except Exception:  # noqa: BLE001 - an older torch without the registry: the op is named, not imported
        return None
    return mod if mod and not mod.startswith(("torch.", "__main__", "eqsat_model_")) else None


# Python operators and how they are written (for rendering source that keeps the spelling).
BINARY = {
    "operator.add": "+", "operator.sub": "-", "operator.mul": "*", "operator.truediv": "/",
    "operator.floordiv": "//", "operator.mod": "%", "operator.matmul": "@", "operator.pow": "**",
    "operator.and_": "&", "operator.or_": "|", "operator.xor": "^", "operator.lshift": "<<",
    "operator.rshift": ">>", "operator.lt": "<", "operator.le": "<=", "operator.gt": ">",
    "operator.ge": ">=", "operator.eq": "==", "operator.ne": "!=",
}
UNARY = {"operator.neg": "-", "operator.pos": "+", "operator.invert": "~", "operator.not_": "not "}

# Ops whose result differs between two calls with the same arguments: each node stays unique.
# Exact names (the last part of the dotted name), not substrings: `normalize` is not `normal`,
# `randn` is random but `operand` is not.
RANDOM_NAMES = frozenset({
    "rand", "rand_like", "randn", "randn_like", "randint", "randint_like", "randperm", "random_",
    "bernoulli", "bernoulli_", "multinomial", "normal", "normal_", "uniform_", "exponential_",
    "poisson", "binomial", "cauchy_", "geometric_", "log_normal_", "_standard_gamma",
    "_sample_dirichlet", "gumbel_softmax", "rrelu_with_noise", "rrelu_with_noise_",
    "dropout", "dropout_", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "alpha_dropout_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "native_dropout", "_fused_dropout", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
    # torch.nn.init fills (in place, so also mutating)
    "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_",
    "trunc_normal_", "orthogonal_", "sparse_",
})
# Random only for some arguments: name -> (argument name, its position among the positional
# arguments, its default, whether the value makes the call random). rrelu draws its slopes when
# `training` is true (with training=False it is leaky_relu with slope (lower + upper) / 2);
# attention drops out when `dropout_p` is not 0 (multi_head_attention_forward only in training,
# which is its default).
def _on(v) -> bool:
    return v is not False and v != 0


RANDOM_WHEN = {
    "rrelu": (("training", 3, False, _on),),
    "rrelu_": (("training", 3, False, _on),),
    "scaled_dot_product_attention": (("dropout_p", 4, 0.0, _on),),
    "multi_head_attention_forward": (("dropout_p", 10, 0.0, _on), ("training", 13, True, _on)),
}


def is_random(name: str, args: tuple | list | None = None, kwargs: dict | None = None) -> bool:
    """Whether a call of target `name` draws random numbers. Ops random only for some arguments
    (`RANDOM_WHEN`, all of whose conditions must hold) are judged by the call's own `args` and
    `kwargs` (constants as Python values) when given; without them they count as deterministic
    (what their arguments usually say: rrelu and attention in eval mode)."""
    base = name.rsplit(".", 1)[-1]
    if base in RANDOM_NAMES:
        return True
    conds = RANDOM_WHEN.get(base)
    if conds is None or (args is None and kwargs is None):
        return False
    args, kwargs = tuple(args or ()), dict(kwargs or {})
    for key, pos, default, random_if in conds:
        value = kwargs[key] if key in kwargs else args[pos] if len(args) > pos else default
        if not random_if(value):
            return False
    return True


def is_mutating(name: str) -> bool:
    """In-place ops: rewriting around them would reorder side effects."""
    base = name.rsplit(".", 1)[-1]
    if name.startswith("Tensor.") and base.endswith("_") and not base.endswith("__"):
        return True
    return name in ("operator.setitem", "operator.delitem") or (
        name.startswith("operator.i") and name not in ("operator.invert", "operator.is_", "operator.is_not", "operator.index"))


assert operator  # re-exported name used in rendered code

"""Graph-level faults that test the whole tool: torch.compile backends that rewrite the ATen graph the way a wrong compiler pass would, then let Inductor compile it.

Each is Inductor with one planted bug, wrong only for some values, dtypes, shapes or layouts, as
real bugs are: a model's own inputs do not trigger it, the tool's special input sets, dtype and size
sweeps or rewrites must. Use as `eqsat-test MODEL.py --backend examples/backends/graph_faults.py:NAME`
(a name in FAULTS). The rewrite runs on the graph Inductor's inner compiler receives (ATen ops after
AOT autograd and the joint-graph passes: uniform spellings, shapes and dtypes in each node's meta).
Where EQSAT_FAULT_LOG names a file, each compile that planted its fault appends "NAME COUNT" to it
(benchmarks/oracle_detection.py counts a fault as reachable in a model by it).

- sigmoid_as_exp_ratio (values): sigmoid(x) as exp(x) / (exp(x) + 1): NaN where exp(x) overflows
  (x > 88 in float32), right elsewhere.
- maximum_drops_nan (values): maximum(a, b) as where(a > b, a, b): a NaN in `a` is lost.
- softmax_without_max (values): the decomposed softmax's x - amax(x) left out: inf / inf = NaN for
  inputs above ~88.
- int_div_floors (dtypes): a true division of two integer tensors floors the quotient first.
- half_exp_bias (dtypes): exp of a float16/bfloat16 tensor 1.6% too large.
- sum_drops_tail (shapes): a sum over a dim whose size is 7 mod 8 (and above 8) leaves out the last
  element of that dim, as a vector loop that forgets its tail.
- cumsum_restarts (shapes): a cumulative sum over a dim longer than 64 starts again at 64.
- transposed_operand_misread (layouts): an add or mul whose operand is a square transposed view
  reads the view's source instead (the strides ignored).
"""
from __future__ import annotations

import os

import torch

aten = torch.ops.aten

__all__ = ["FAULTS", "sigmoid_as_exp_ratio", "maximum_drops_nan", "softmax_without_max", "int_div_floors",
           "half_exp_bias", "sum_drops_tail", "cumsum_restarts", "transposed_operand_misread"]


def _val(n):
    v = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
    return v if isinstance(v, torch.Tensor) else None


def _static(size) -> int | None:
    try:
        return int(size)
    except (TypeError, ValueError):  # a symbolic size (dynamic=True): no fault
        return None


def _sigmoid(g, n) -> bool:
    if n.target is not aten.sigmoid.default:
        return False
    with g.inserting_before(n):
        e = g.call_function(aten.exp.default, (n.args[0],))
        d = g.call_function(aten.add.Tensor, (e, 1))
        new = g.call_function(aten.div.Tensor, (e, d))
    n.replace_all_uses_with(new)
    return True


def _maximum(g, n) -> bool:
    if n.target is not aten.maximum.default:
        return False
    a, b = n.args
    with g.inserting_before(n):
        gt = g.call_function(aten.gt.Tensor, (a, b))
        new = g.call_function(aten.where.self, (gt, a, b))
    n.replace_all_uses_with(new)
    return True


def _softmax(g, n) -> bool:
    if n.target is not aten.sub.Tensor or not isinstance(n.args[1], torch.fx.Node) \
            or n.args[1].target is not aten.amax.default or not any(u.target is aten.exp.default for u in n.users):
        return False
    n.replace_all_uses_with(n.args[0])
    return True


def _int_div(g, n) -> bool:
    if n.target is not aten.div.Tensor or len(n.args) != 2:
        return False
    a, b = (_val(x) for x in n.args)
    if a is None or b is None or a.is_floating_point() or b.is_floating_point() or a.dtype == torch.bool:
        return False
    out = _val(n)
    with g.inserting_before(n):
        q = g.call_function(aten.div.Tensor_mode, n.args, {"rounding_mode": "floor"})
        new = g.call_function(torch.ops.prims.convert_element_type.default, (q, out.dtype))
    n.replace_all_uses_with(new)
    return True


def _half_exp(g, n) -> bool:
    v = _val(n.args[0]) if n.target is aten.exp.default else None
    if v is None or v.dtype not in (torch.float16, torch.bfloat16):
        return False
    with g.inserting_before(n.next):
        new = g.call_function(aten.mul.Tensor, (n, 1.015625))
    n.replace_all_uses_with(new, delete_user_cb=lambda u: u is not new)
    return True


def _sum_tail(g, n) -> bool:
    if n.target is not aten.sum.dim_IntList:
        return False
    x, dims = n.args[0], n.args[1]
    v = _val(x)
    if v is None or not dims or len(dims) != 1:
        return False
    d = dims[0] % v.dim()
    size = _static(v.shape[d])
    if size is None or size <= 8 or size % 8 != 7:
        return False
    with g.inserting_before(n):
        cut = g.call_function(aten.slice.Tensor, (x, d, 0, size - 1))
    n.replace_input_with(x, cut)
    return True


def _cumsum(g, n) -> bool:
    if n.target is not aten.cumsum.default:
        return False
    v = _val(n.args[0])
    if v is None or v.dim() == 0:
        return False
    d = n.args[1] % v.dim()
    size = _static(v.shape[d])
    if size is None or size <= 64:
        return False
    with g.inserting_before(n.next):  # after n, in order
        head = g.call_function(aten.slice.Tensor, (n, d, 0, 64))
        tail = g.call_function(aten.slice.Tensor, (n, d, 64, size))
        at = g.call_function(aten.slice.Tensor, (n, d, 63, 64))
        rest = g.call_function(aten.sub.Tensor, (tail, at))
        new = g.call_function(aten.cat.default, ([head, rest], d))
    n.replace_all_uses_with(new, delete_user_cb=lambda u: u not in (head, tail, at))
    return True


def _transposed(g, n) -> bool:
    if n.target not in (aten.add.Tensor, aten.mul.Tensor):
        return False
    done = False
    for a in n.args:
        if isinstance(a, torch.fx.Node) and a.target in (aten.permute.default, aten.transpose.int):
            src, out = _val(a.args[0]), _val(a)
            if src is not None and out is not None and tuple(src.shape) == tuple(out.shape) and src.dim() >= 2 \
                    and _static(src.shape[-1]) is not None and src.shape[-1] > 1:
                n.replace_input_with(a, a.args[0])
                done = True
    return done


_REWRITES = {
    "sigmoid_as_exp_ratio": _sigmoid, "maximum_drops_nan": _maximum, "softmax_without_max": _softmax,
    "int_div_floors": _int_div, "half_exp_bias": _half_exp, "sum_drops_tail": _sum_tail,
    "cumsum_restarts": _cumsum, "transposed_operand_misread": _transposed,
}


def _planted(name: str, gm: torch.fx.GraphModule, example_inputs) -> int:
    """Apply fault `name` to every matching node; the count. Node metadata is propagated again after."""
    g = gm.graph
    count = sum(_REWRITES[name](g, n) for n in list(g.nodes) if n.op == "call_function")
    if count:
        g.eliminate_dead_code()
        gm.recompile()
        from torch._guards import detect_fake_mode
        from torch.fx.passes.fake_tensor_prop import FakeTensorProp
        mode = detect_fake_mode(example_inputs)
        if mode is not None:
            FakeTensorProp(gm, mode).propagate_dont_convert_inputs(*example_inputs)
        else:
            FakeTensorProp(gm).propagate(*example_inputs)
        log = os.environ.get("EQSAT_FAULT_LOG")
        if log:
            with open(log, "a") as fh:
                fh.write(f"{name} {count}\n")
    return count


def make_fault(name: str):
    """Inductor with fault `name` planted in the graph its inner compiler gets."""
    def backend(gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx, compile_fx_inner

        def inner(g, inputs, **kwargs):
            _planted(name, g, inputs)
            return compile_fx_inner(g, inputs, **kwargs)
        # no cache: a cached graph compiled without the fault (or with another) would skip the inner compiler
        with torch._functorch.config.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, inner_compile=inner, config_patches={"fx_graph_cache": False})
    backend.__name__ = name
    return backend


FAULTS = {name: make_fault(name) for name in _REWRITES}
sigmoid_as_exp_ratio = FAULTS["sigmoid_as_exp_ratio"]
maximum_drops_nan = FAULTS["maximum_drops_nan"]
softmax_without_max = FAULTS["softmax_without_max"]
int_div_floors = FAULTS["int_div_floors"]
half_exp_bias = FAULTS["half_exp_bias"]
sum_drops_tail = FAULTS["sum_drops_tail"]
cumsum_restarts = FAULTS["cumsum_restarts"]
transposed_operand_misread = FAULTS["transposed_operand_misread"]

"""The generator's op table, part 2: index ops (gather, scatter, index_add/copy/fill/put, index_select, take_along_dim, embedding, sort and topk values) and in-place writes (to inputs, to views of them, to intermediates; `_foreach_*_`), read back through views.

Positions come from index inputs (int64 in [0, size), repeats allowed) where repeats are defined (gathers and
accumulating writes), and from distinct positions built in forward where two writes to one place would make the
result depend on their order (scatter, index_copy, index_put without accumulate).
"""
from __future__ import annotations

import torch

from eqsat_test.hunt.state import DrawError, Gen

# ---- index ops -----------------------------------------------------------------------------------


def _with_dim(g: Gen):
    a = g.pick(lambda t: t.dim() >= 1 and t.numel() > 0)
    d = g.dim(a, nonempty=True)
    return a, d, g.t(a)


def _index_shape(g: Gen, t: torch.Tensor, d: int) -> tuple[int, ...]:
    """An index tensor's shape for gather/scatter along d: at most t's extents, any length along d."""
    shape = [g.rng.randint(1, s) if s > 0 else 0 for s in t.shape]
    shape[d] = g.rng.choice((1, 3, 7, t.shape[d], 2 * t.shape[d]))
    return tuple(shape)


def gather(g: Gen):
    a, d, t = _with_dim(g)
    i = g.new_index(_index_shape(g, t, d), t.shape[d])
    if g.rng.random() < 0.3:
        return f"torch.take_along_dim({a}, {i}, {d})", "take_along_dim", "index"
    return (f"torch.gather({a}, {d}, {i})" if g.rng.random() < 0.5 else f"{a}.gather({d}, {i})"), "gather", "index"


def index_select(g: Gen):
    a, d, t = _with_dim(g)
    i = g.new_index((g.rng.choice((1, 4, 7, 16, 33)),), t.shape[d])
    r = g.rng.random()
    if r < 0.5:
        return f"{a}.index_select({d}, {i})", "index_select", "index"
    if r < 0.8:
        return f"{a}[{', '.join([':'] * (d % t.dim()) + [i])}]", "index", "index"
    return f"F.embedding({i}, {a})" if t.dim() == 2 and d in (0, -2) else f"torch.index_select({a}, {d}, {i})", \
        "index_select", "index"


def _src(g: Gen, shape: tuple[int, ...], like: str) -> str:
    """A source of values for a write: a new input of that shape in like's dtype (sometimes another)."""
    dt = str(g.t(like).dtype).replace("torch.", "")
    return g.new_input(shape, dtype=dt if g.rng.random() < 0.8 else None)


def scatter(g: Gen):
    a, d, t = _with_dim(g)
    rng = g.rng
    r = rng.random()
    if r < 0.45:  # accumulating: repeats are fine
        shape = _index_shape(g, t, d)
        i = g.new_index(shape, t.shape[d])
        src = _src(g, shape, a)
        if rng.random() < 0.5:
            return f"{a}.scatter_add({d}, {i}, {src})", "scatter_add", "index"
        red = rng.choice(("sum", "prod", "mean", "amax", "amin"))
        return f"{a}.scatter_reduce({d}, {i}, {src}, {red!r}, include_self={rng.random() < 0.5})", \
            "scatter_reduce", "index"
    # one write per place: distinct positions along d, the same in every column
    k = rng.randint(1, t.shape[d])
    view = [1] * t.dim()
    view[d % t.dim()] = k
    full = list(t.shape)
    full[d % t.dim()] = k
    pos = f"{g.unique_positions(t.shape[d], k)}.view({', '.join(map(str, view))}).expand({', '.join(map(str, full))})"
    if rng.random() < 0.4:
        return f"{a}.scatter({d}, {pos}, {g.scalar(a)})", "scatter", "index"
    return f"{a}.scatter({d}, {pos}, {_src(g, tuple(full), a)})", "scatter", "index"


def index_write(g: Gen):
    """index_add, index_copy, index_fill, index_put: out of place (in place is an inplace op)."""
    a, d, t = _with_dim(g)
    rng = g.rng
    r = rng.random()
    if r < 0.4:
        k = rng.choice((1, 3, 7, t.shape[d] + 2))
        i = g.new_index((k,), t.shape[d])
        shape = list(t.shape)
        shape[d % t.dim()] = k
        alpha = rng.choice(("", ", alpha=2", ", alpha=-1")) if not t.is_floating_point() else \
            rng.choice(("", ", alpha=0.5", ", alpha=-2.0"))
        return f"{a}.index_add({d}, {i}, {_src(g, tuple(shape), a)}{alpha})", "index_add", "index"
    if r < 0.6:
        k = rng.randint(1, t.shape[d])
        shape = list(t.shape)
        shape[d % t.dim()] = k
        return f"{a}.index_copy({d}, {g.unique_positions(t.shape[d], k)}, {_src(g, tuple(shape), a)})", \
            "index_copy", "index"
    if r < 0.75:
        i = g.new_index((rng.choice((1, 2, 5)),), t.shape[d])
        return f"{a}.index_fill({d}, {i}, {g.scalar(a)})", "index_fill", "index"
    acc = rng.random() < 0.5
    k = rng.choice((1, 3, 7)) if acc else rng.randint(1, t.shape[0])
    pos = g.new_index((k,), t.shape[0]) if acc else g.unique_positions(t.shape[0], k)
    vals = _src(g, (k,) + tuple(t.shape[1:]) if rng.random() < 0.7 else (1,), a)
    return f"{a}.index_put(({pos},), {vals}, accumulate={acc})", "index_put", "index"


def masked(g: Gen):
    a = g.pick()
    t = g.t(a)
    cond = f"{a} < 0" if t.dtype != torch.bool else f"~{a}"
    if g.rng.random() < 0.5:
        return f"{a}.masked_fill({cond}, {g.scalar(a)})", "masked_fill", "index"
    return f"torch.where({cond}, {g.partner(a)}, {a})", "where", "index"


def sort_values(g: Gen):
    a, d, t = _with_dim(g)
    rng = g.rng
    r = rng.random()
    if r < 0.4:
        k = rng.randint(1, t.shape[d])
        return f"{a}.topk({k}, {d}, largest={rng.random() < 0.7}).values", "topk", "index"
    if r < 0.7:
        return f"{a}.sort({d}, descending={rng.random() < 0.5}).values", "sort", "index"
    bounds = f"torch.linspace(-2, 2, {rng.choice((3, 7, 16))}, device={g.device})"
    return f"torch.bucketize({a}, {bounds}, right={rng.random() < 0.5})", "bucketize", "index"


INDEX_BUILDERS = [gather, gather, index_select, scatter, scatter, index_write, index_write, masked, sort_values]


# ---- in-place writes ------------------------------------------------------------------------------


def _target(g: Gen) -> tuple[str, str]:
    """What an in-place op writes: an input (not an index input), a view of one built on the spot (a transpose,
    a stepped slice, a narrow, a diagonal), or an intermediate; (its source, the value it is or views)."""
    rng = g.rng
    names = g.input_names() - g.index_names
    inputs = [n for n in g.order if n in names]
    if inputs and rng.random() < 0.7:
        x = rng.choice(inputs)
        t = g.t(x)
        r = rng.random()
        if r < 0.45 or t.dim() == 0:
            return x, x
        if r < 0.6 and t.dim() >= 2:
            return f"{x}.transpose(0, 1)", x
        if r < 0.8:
            d = rng.randrange(t.dim())
            return f"{x}[{', '.join([':'] * d + [f'{rng.choice((0, 1))}::2'])}]", x
        if r < 0.9 and t.dim() >= 1 and t.shape[0] > 1:
            return f"{x}.narrow(0, 1, {t.shape[0] - 1})", x
        return (f"{x}.diagonal()", x) if t.dim() >= 2 else (x, x)
    x = g.pick()
    return x, x


def _eval(g: Gen, src: str) -> torch.Tensor:
    try:
        return eval(src, {"torch": torch, **g.env})  # (our own rendered view expression)
    except Exception as e:  # noqa: BLE001 - the view does not apply to this value
        raise DrawError(str(e)) from e


def inplace_pointwise(g: Gen):
    tgt, base = _target(g)
    t = _eval(g, tgt)
    rng = g.rng
    r = rng.random()
    if r < 0.35:
        b = g.partner(base) if rng.random() < 0.5 and tgt == base else g.scalar(base)
        name = rng.choice(("add_", "sub_", "mul_"))
        return f"{tgt}.{name}({b})", name, "inplace"
    if r < 0.5 and t.is_floating_point():
        name = rng.choice(("div_", "clamp_", "relu_", "neg_", "abs_", "exp_", "sqrt_"))
        arg = {"div_": "3.0", "clamp_": "-1.0, 1.0"}.get(name, "")
        return f"{tgt}.{name}({arg})", name, "inplace"
    if r < 0.7:
        return f"{tgt}.copy_({_copy_src(g, t, base)})", "copy_", "inplace"
    if r < 0.8:
        return f"{tgt}.fill_({g.scalar(base)})" if rng.random() < 0.6 else f"{tgt}.zero_()", "fill_", "inplace"
    if r < 0.9:  # augmented assignment, as models write it
        return f"{tgt} += {g.scalar(base)}" if tgt == base else f"{tgt}.add_({g.scalar(base)})", "add_", "inplace"
    d = rng.randrange(t.dim()) if t.dim() else 0
    if t.dim() == 0 or t.shape[d] == 0:
        raise DrawError("nothing to slice")
    idx = ", ".join([":"] * d + [f"{rng.choice((0, 1))}::{rng.choice((2, 3))}"])
    return f"{tgt}[{idx}] = {g.scalar(base)}", "setitem", "inplace"


def _copy_src(g: Gen, t: torch.Tensor, base: str) -> str:
    """A value that broadcasts to t: one drawn before, its flip (a copy of a tensor into itself, reversed), a number."""
    shape = tuple(t.shape)
    fits = [n for n in g.order if n not in g.index_names and _bcast(tuple(g.t(n).shape), shape)]
    r = g.rng.random()
    if fits and r < 0.6:
        return g.rng.choice(fits[-4:])
    if t.dim() and r < 0.85:
        return f"{base}.flip(0)" if tuple(g.t(base).shape) == shape else g.new_input(shape)
    return f"torch.tensor({g.scalar(base)})"


def _bcast(small: tuple, big: tuple) -> bool:
    return len(small) <= len(big) and all(s in (b, 1) for s, b in zip(reversed(small), reversed(big)))


def inplace_index(g: Gen):
    """index_put_, index_add_, scatter_, masked_fill_, index_copy_ into an input or a view of one."""
    tgt, base = _target(g)
    t = _eval(g, tgt)
    if t.dim() == 0 or t.numel() == 0:
        raise DrawError("nothing to index")
    rng = g.rng
    dt = str(t.dtype).replace("torch.", "")
    r = rng.random()
    if r < 0.3:
        acc = rng.random() < 0.5
        k = rng.choice((1, 3, 7)) if acc else rng.randint(1, t.shape[0])
        pos = g.new_index((k,), t.shape[0]) if acc else g.unique_positions(t.shape[0], k)
        vals = g.new_input((k,) + tuple(t.shape[1:]), dtype=dt)
        if rng.random() < 0.4 and not acc:
            return f"{tgt}[{pos}] = {vals}", "index_put_", "inplace"
        return f"{tgt}.index_put_(({pos},), {vals}, accumulate={acc})", "index_put_", "inplace"
    if r < 0.55:
        k = rng.choice((1, 3, t.shape[0] + 1))
        i = g.new_index((k,), t.shape[0])
        return f"{tgt}.index_add_(0, {i}, {g.new_input((k,) + tuple(t.shape[1:]), dtype=dt)})", "index_add_", \
            "inplace"
    if r < 0.7:
        k = rng.randint(1, t.shape[0])
        src = g.new_input((k,) + tuple(t.shape[1:]), dtype=dt)
        return f"{tgt}.index_copy_(0, {g.unique_positions(t.shape[0], k)}, {src})", "index_copy_", "inplace"
    if r < 0.85:
        cond = f"{tgt} > 0" if t.dtype != torch.bool else f"~{tgt}"
        return f"{tgt}.masked_fill_({cond}, {g.scalar(base)})", "masked_fill_", "inplace"
    k = rng.randint(1, t.shape[0])
    view = [k] + [1] * (t.dim() - 1)
    full = [k] + list(t.shape[1:])
    pos = f"{g.unique_positions(t.shape[0], k)}.view({', '.join(map(str, view))}).expand({', '.join(map(str, full))})"
    return f"{tgt}.scatter_(0, {pos}, {g.scalar(base)})", "scatter_", "inplace"


def inplace_foreach(g: Gen):
    """torch._foreach_add_ / _mul_ over two tensors (inputs or intermediates), with numbers or tensors."""
    names = [n for n in g.order if n not in g.index_names]
    if len(names) < 2:
        raise DrawError("one tensor")
    a, b = g.rng.sample(names, 2)
    name = g.rng.choice(("_foreach_add_", "_foreach_mul_"))
    r = g.rng.random()
    if r < 0.4:
        return f"torch.{name}([{a}, {b}], {g.scalar(a)})", name, "inplace"
    if r < 0.7:
        return f"torch.{name}([{a}, {b}], [{g.scalar(a)}, {g.scalar(b)}])", name, "inplace"
    pa = g.partner(a)
    pb = g.partner(b)
    return f"torch.{name}([{a}, {b}], [{pa}, {pb}])", name, "inplace"


INPLACE_BUILDERS = [inplace_pointwise, inplace_pointwise, inplace_index, inplace_index, inplace_foreach]

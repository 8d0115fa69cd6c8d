"""The generator's op table, part 1: pointwise, binary, view, reduction, scan, dtype and creation ops, each a builder that picks valid arguments for the values drawn so far and returns its source (`BUILDERS` joins every part).

The pointwise ops, reductions and their spellings come from the rules' op tables (rewrite/optables.py: what
the rule schemas move through layouts and spell in other ways), with ops the ledger's bugs live in added
(erfinv, atanh, acosh, floor_divide, remainder, threshold, ...). A builder returns (source, op, class) or
raises DrawError; the program's drawing loop runs it on the inputs and draws again when torch rejects it.
"""
from __future__ import annotations

import torch

from eqsat_test.hunt import ops_index, ops_nn
from eqsat_test.hunt.inputs import FLOAT_DTYPES, INT_DTYPES, INT_RANGES
from eqsat_test.hunt.state import DrawError, Gen
from eqsat_test.rewrite.optables import BINARY, REDUCTION_SPELLINGS, UNARY

# ---- pointwise ---------------------------------------------------------------------------------

# The rules' pointwise ops (rewrite/optables.py UNARY), spelled as models call them.
_UNARY_SPELLING = {"neg": "-{a}", "gelu_tanh": "F.gelu({a}, approximate='tanh')", "torch_relu": "torch.relu({a})",
                   "relu": "F.relu({a})", "leaky_relu": "F.leaky_relu({a}, 0.01)", "bitwise_not": "~{a}",
                   "to_float32": "{a}.float()", "to_float64": "{a}.to(torch.float64)"}
_F_NAMES = {"gelu", "silu", "softplus", "elu", "mish", "hardswish", "hardsigmoid", "relu6", "hardtanh"}


def _unary_form(name: str) -> str:
    if name in _UNARY_SPELLING:
        return _UNARY_SPELLING[name]
    return f"F.{name}({{a}})" if name in _F_NAMES else f"torch.{name}({{a}})"


# Ops beyond the table that the ledger's bugs and the domain-edge inputs aim at.
EXTRA_UNARY = (
    ("erfinv", "torch.erfinv({a})"), ("atanh", "torch.atanh({a})"), ("acosh", "torch.acosh({a})"),
    ("asinh", "torch.asinh({a})"), ("asin", "torch.asin({a})"), ("acos", "torch.acos({a})"),
    ("atan", "torch.atan({a})"), ("tan", "torch.tan({a})"), ("sinh", "torch.sinh({a})"), ("cosh", "torch.cosh({a})"),
    ("log2", "torch.log2({a})"), ("log10", "torch.log10({a})"), ("exp2", "torch.exp2({a})"),
    ("ceil", "torch.ceil({a})"), ("trunc", "torch.trunc({a})"), ("frac", "torch.frac({a})"),
    ("selu", "F.selu({a})"), ("celu", "F.celu({a})"), ("logit", "torch.logit({a}, 1e-6)"),
    ("lgamma", "torch.lgamma({a})"), ("digamma", "torch.digamma({a})"), ("sinc", "torch.sinc({a})"),
    ("nan_to_num", "torch.nan_to_num({a})"), ("isinf", "torch.isinf({a})"), ("signbit", "torch.signbit({a})"),
    ("pow", "{a} ** 0.5"), ("pow", "{a} ** -0.5"), ("pow", "{a} ** 2"), ("pow", "{a} ** 3"),
    ("rsqrt", "{a}.rsqrt()"), ("softsign", "F.softsign({a})"), ("tanhshrink", "F.tanhshrink({a})"),
    ("erfc", "torch.erfc({a})"), ("i0", "torch.i0({a})"), ("sgn", "torch.sgn({a})"),
)
UNARY_FORMS = tuple((u.name.replace("torch_", ""), _unary_form(u.name)) for u in UNARY) + EXTRA_UNARY


# Ops whose weak spots a magnitude profile reaches: drawn for values of that profile half of the time.
EDGE_OPS = {
    "edge1": ("erfinv", "atanh", "asin", "acos", "logit", "log1p", "acosh"),
    "big": ("acosh", "asinh", "log", "sqrt", "rsqrt", "log2", "exp", "cosh", "reciprocal"),
    "small": ("expm1", "log1p", "atanh", "asinh", "sinh", "tan", "erf", "sinc", "tanh", "sin"),
    "tiny": ("reciprocal", "rsqrt", "log", "expm1", "atanh", "sqrt", "sign", "sgn"),
    "wide": ("exp", "square", "cosh", "sinh", "softplus", "sigmoid", "tanh", "pow"),
    "integral": ("floor", "round", "trunc", "frac", "ceil", "sign"),
}
_FORMS_BY_NAME: dict[str, list[str]] = {}
for _n, _f in UNARY_FORMS:
    _FORMS_BY_NAME.setdefault(_n, []).append(_f)


def unary(g: Gen):
    a = g.pick()
    edge = [n for n in EDGE_OPS.get(g.tags.get(a, ""), ()) if n in _FORMS_BY_NAME]
    if edge and g.rng.random() < 0.5:
        name = g.rng.choice(edge)
        form = g.rng.choice(_FORMS_BY_NAME[name])
    else:
        name, form = g.rng.choice(UNARY_FORMS)
    return form.format(a=a), name, "pointwise"


def clamp(g: Gen):
    a = g.pick(lambda t: t.dtype != torch.bool)
    t = g.t(a)
    lo, hi = ("-0.5", "0.5") if t.is_floating_point() else ("-3", "5")
    r = g.rng.random()
    if r < 0.3:
        return f"{a}.clamp({lo}, {hi})", "clamp", "pointwise"
    if r < 0.5:
        return f"torch.clamp({a}, min={lo})", "clamp", "pointwise"
    if r < 0.75:  # an integer tensor with a float threshold and value too (the kept values must stay exact)
        v = g.rng.choice(("0", "0.5", "-1.5", "2")) if g.rng.random() < 0.5 else "0"
        return f"F.threshold({a}, {g.rng.choice(('0', '0.5', '1', '-1.5'))}, {v})", "threshold", "pointwise"
    return f"F.hardtanh({a}, {lo}, {hi})", "hardtanh", "pointwise"


# ---- binary ------------------------------------------------------------------------------------

_TABLE_BINARY = {b.name: b for b in BINARY}
BINARY_FORMS = (
    ("add", "{a} + {b}"), ("add", "torch.add({a}, {b}, alpha=2)"), ("sub", "{a} - {b}"), ("mul", "{a} * {b}"),
    ("div", "{a} / {b}"), ("div", "torch.div({a}, {b}, rounding_mode='floor')"),
    ("div", "torch.div({a}, {b}, rounding_mode='trunc')"), ("floor_divide", "{a} // {b}"),
    ("remainder", "{a} % {b}"), ("remainder", "torch.remainder({a}, {b})"), ("fmod", "torch.fmod({a}, {b})"),
    ("maximum", "torch.maximum({a}, {b})"), ("minimum", "torch.minimum({a}, {b})"), ("pow", "{a} ** {b}"),
    ("atan2", "torch.atan2({a}, {b})"), ("copysign", "torch.copysign({a}, {b})"), ("hypot", "torch.hypot({a}, {b})"),
    ("xlogy", "torch.xlogy({a}, {b})"), ("lerp", "torch.lerp({a}, {b}, 0.3)"),
    ("eq", "{a} == {b}"), ("ne", "{a} != {b}"), ("lt", "{a} < {b}"), ("le", "{a} <= {b}"), ("gt", "{a} > {b}"),
    ("ge", "{a} >= {b}"), ("logical_and", "torch.logical_and({a}, {b})"), ("logical_or", "torch.logical_or({a}, {b})"),
    ("logical_xor", "torch.logical_xor({a}, {b})"), ("bitwise_and", "{a} & {b}"), ("bitwise_or", "{a} | {b}"),
    ("bitwise_xor", "{a} ^ {b}"),
)
assert {b.name for b in BINARY} <= {n for n, _ in BINARY_FORMS}, "every binary op of the rules' table is drawn"
_INT_DIVISIONS = {"floor_divide", "remainder", "fmod", "div"}  # integer division by zero raises in eager


def binary(g: Gen):
    a = g.pick()
    name, form = g.rng.choice(BINARY_FORMS)
    ta = g.t(a)
    if g.rng.random() < 0.3:  # a Python number on the right (the rules' scalar forms)
        b = g.scalar(a)
        if name in _INT_DIVISIONS and not ta.is_floating_point() and b in ("0", "False"):
            b = "3"
        return form.format(a=a, b=b), name, "binary"
    b = g.partner(a)
    tb = g.t(b)
    if name in _INT_DIVISIONS and not ta.is_floating_point() and not tb.is_floating_point():
        b = f"{b}.clamp(min=1)" if tb.dtype != torch.bool else f"({b} | True)"
    if g.rng.random() < 0.25:
        a, b = b, a  # the broadcasting operand on the left too
    return form.format(a=a, b=b), name, "binary"


def where(g: Gen):
    a = g.pick()
    r = g.rng.random()
    bools = [n for n in g.order if g.t(n).dtype == torch.bool and n not in g.index_names
             and _fits(tuple(g.t(n).shape), tuple(g.t(a).shape))]
    cond = g.rng.choice(bools) if bools and r < 0.5 else f"{a} > {g.scalar(a) if g.t(a).dtype != torch.bool else 0}"
    other = g.partner(a) if g.rng.random() < 0.6 else g.scalar(a)
    return f"torch.where({cond}, {a}, {other})", "where", "binary"


def _fits(small: tuple, big: tuple) -> bool:
    return len(small) <= len(big) and all(s in (b, 1) for s, b in zip(reversed(small), reversed(big)))


# ---- views and layout --------------------------------------------------------------------------

def view(g: Gen):
    a = g.pick()
    t = g.t(a)
    n = t.dim()
    rng = g.rng
    choices = ["flip", "slice", "unsqueeze", "reshape", "contiguous"]
    if n >= 1:
        choices += ["flip", "slice", "slice", "narrow", "select", "roll", "expand", "chunk", "cat"]
    if n >= 2:
        choices += ["transpose", "transpose", "permute", "t", "diagonal", "flatten", "movedim", "tril", "unfold",
                    "stack"]
    if 1 in t.shape:
        choices += ["squeeze", "expand"]
    kind = rng.choice(choices)
    if kind == "flip":
        dims = sorted(rng.sample(range(n), rng.randint(1, n))) if n else []
        if not dims:
            raise DrawError("nothing to flip")
        return (f"{a}.flip({dims})" if rng.random() < 0.6 else f"torch.flip({a}, {dims})"), "flip", "view"
    if kind == "slice":
        if n == 0:
            raise DrawError("0-d")
        d = rng.randrange(n)
        start, stop, step = rng.choice((0, 1, 2)), rng.choice(("", "-1", "-2", str(max(1, t.shape[d] - 1)))), \
            rng.choice((2, 2, 3, 1))
        idx = ", ".join([":"] * d + [f"{start}:{stop}:{step}"])
        return f"{a}[{idx}]", "slice", "view"
    if kind == "narrow":
        d = g.dim(a, nonempty=True)
        size = t.shape[d]
        start = rng.randrange(size)
        return f"{a}.narrow({d}, {start}, {rng.randint(0, size - start)})", "narrow", "view"
    if kind == "select":
        d = g.dim(a, nonempty=True)
        i = rng.randrange(t.shape[d])
        return (f"{a}.select({d}, {i})" if rng.random() < 0.5 else f"{a}[{', '.join([':'] * (d % n) + [str(i)])}]"), \
            "select", "view"
    if kind == "unsqueeze":
        return f"{a}.unsqueeze({rng.randint(-n - 1, n)})", "unsqueeze", "view"
    if kind == "squeeze":
        d = rng.choice([i for i, s in enumerate(t.shape) if s == 1])
        return f"{a}.squeeze({d})", "squeeze", "view"
    if kind == "reshape":
        return _reshape(g, a)
    if kind == "contiguous":
        return f"{a}.contiguous()", "contiguous", "view"
    if kind == "roll":
        return f"{a}.roll({rng.choice((1, -1, 3))}, {g.dim(a)})", "roll", "view"
    if kind == "expand":
        return _expand(g, a)
    if kind == "chunk":
        d = g.dim(a, nonempty=True)
        k = rng.choice((2, 3))
        return f"{a}.chunk({k}, {d})[{rng.randrange(min(k, t.shape[d]))}]", "chunk", "view"
    if kind == "cat":
        d = g.dim(a)
        other = rng.choice([f"{a}.flip({d})", a, f"{a} * 2"])
        return f"torch.cat([{a}, {other}], {d})", "cat", "view"
    if kind == "stack":
        return f"torch.stack([{a}, {a}.flip(0)], {rng.randint(-n - 1, n)})", "stack", "view"
    if kind in ("transpose", "t"):
        if kind == "t" and n == 2:
            return f"{a}.t()", "t", "view"
        i, j = rng.sample(range(n), 2)
        return f"{a}.transpose({i}, {j})", "transpose", "view"
    if kind == "permute":
        perm = list(range(n))
        while perm == sorted(perm):
            rng.shuffle(perm)
        return f"{a}.permute({', '.join(map(str, perm))})", "permute", "view"
    if kind == "diagonal":
        i, j = rng.sample(range(n), 2)
        return f"{a}.diagonal({rng.choice((0, 1, -1))}, {i}, {j})", "diagonal", "view"
    if kind == "flatten":
        return f"{a}.flatten({rng.randrange(n - 1)})", "flatten", "view"
    if kind == "movedim":
        i, j = rng.sample(range(n), 2)
        return f"{a}.movedim({i}, {j})", "movedim", "view"
    if kind == "tril":
        return f"{a}.{rng.choice(('tril', 'triu'))}({rng.choice((0, 1, -1))})", "tril", "view"
    if kind == "unfold":
        d = g.dim(a, nonempty=True)
        size = rng.randint(1, max(1, min(t.shape[d], 4)))
        return f"{a}.unfold({d}, {size}, {rng.choice((1, 2, size))})", "unfold", "view"
    raise DrawError(kind)


def _reshape(g: Gen, a: str):
    t = g.t(a)
    rng = g.rng
    shape = list(t.shape)
    r = rng.random()
    if r < 0.3 or len(shape) < 2:
        new = [-1]
    elif r < 0.6:  # merge two adjacent dims
        i = rng.randrange(len(shape) - 1)
        new = shape[:i] + [shape[i] * shape[i + 1]] + shape[i + 2:]
    else:  # split a dim in two
        splits = [(i, k) for i, s in enumerate(shape) for k in (2, 3, 4, 5) if s % k == 0 and s // k > 1]
        if not splits:
            new = [-1]
        else:
            i, k = rng.choice(splits)
            new = shape[:i] + [k, shape[i] // k] + shape[i + 1:]
    how = "view" if rng.random() < 0.3 else "reshape"
    return f"{a}.{how}({', '.join(map(str, new))})", how, "view"


def _expand(g: Gen, a: str):
    t = g.t(a)
    shape = list(t.shape)
    ones = [i for i, s in enumerate(shape) if s == 1]
    if ones and g.rng.random() < 0.7:
        shape[g.rng.choice(ones)] = g.rng.choice((2, 3, 7, 16))
    else:
        shape = [g.rng.choice((2, 3))] + shape
    return f"{a}.expand({', '.join(map(str, shape))})", "expand", "view"


# ---- reductions, scans, normalizations ---------------------------------------------------------

# The rules' reduction spellings (name, dtypes, keepdim form, torch.<name> form): scans and softmax apart.
_SCANS = {"cumsum", "cumprod"}
_SOFTMAX = {"softmax", "log_softmax"}
REDUCTION_NAMES = tuple(r for r in REDUCTION_SPELLINGS if r[0] not in _SCANS | _SOFTMAX)


def reduction(g: Gen):
    a = g.pick()
    rng = g.rng
    t = g.t(a)
    r = rng.random()
    if r < 0.12:
        return f"{a}.{rng.choice(('sum', 'mean', 'amax', 'argmax', 'argmin', 'prod', 'std', 'var'))}()", "full", \
            "reduction"
    d = g.dim(a)
    if r < 0.6:
        name, _dtypes, keep, torch_form = rng.choice(REDUCTION_NAMES)
        if torch_form and rng.random() < 0.4:
            return f"torch.{name}({a}, dim={d}{', keepdim=True' if keep and rng.random() < 0.4 else ''})", name, \
                "reduction"
        return f"{a}.{name}({d}{', keepdim=True' if keep and rng.random() < 0.4 else ''})", name, "reduction"
    if r < 0.72:
        name = rng.choice(("var", "std"))
        return f"{a}.{name}({d}, correction={rng.choice((0, 1, 2))})", name, "reduction"
    if r < 0.8:
        name = rng.choice(("var_mean", "std_mean"))
        return f"torch.{name}({a}, {d})[{rng.randrange(2)}]", name, "reduction"
    if r < 0.87:
        name = rng.choice(("max", "min"))
        return f"{a}.{name}({d}){rng.choice(('[0]', '.values', '.indices'))}", name, "reduction"
    if r < 0.93 and t.dim() >= 2:
        d2 = (d + 1) % t.dim()
        return f"{a}.{rng.choice(('sum', 'mean', 'amax', 'amin'))}(({d}, {d2}))", "sum", "reduction"
    if r < 0.97:
        order = rng.choice(("1", "2", "3", "float('inf')"))
        return f"torch.linalg.vector_norm({a}, {order}, {d})", "vector_norm", "reduction"
    name = rng.choice(("nansum", "logsumexp", "count_nonzero"))
    return f"torch.{name}({a}, {d})", name, "reduction"


def softmax(g: Gen):
    a = g.pick()
    d = g.dim(a)
    rng = g.rng
    r = rng.random()
    if r < 0.5:
        name = rng.choice(("softmax", "log_softmax"))
        scale = rng.choice(("", " * 0.5", " / 3.0", " * 8"))
        return f"F.{name}({a}{scale}, {d})", name, "reduction"
    if r < 0.7 and g.t(a).dim() >= 1:
        n = g.t(a).shape[-1]
        return f"F.layer_norm({a}, ({n},))", "layer_norm", "reduction"
    if r < 0.85:
        return f"F.normalize({a}, dim={d})", "normalize", "reduction"
    n = g.t(a).shape[-1] if g.t(a).dim() else 1
    return f"F.rms_norm({a}, ({n},))", "rms_norm", "reduction"


def scan(g: Gen):
    a = g.pick()
    d = g.dim(a)
    rng = g.rng
    r = rng.random()
    if r < 0.35:
        return (f"{a}.cumsum({d})" if rng.random() < 0.5 else f"torch.cumsum({a}, dim={d})"), "cumsum", "scan"
    if r < 0.6:
        return (f"{a}.cumprod({d})" if rng.random() < 0.5 else f"torch.cumprod({a}, dim={d})"), "cumprod", "scan"
    if r < 0.75:
        name = rng.choice(("cummax", "cummin"))
        return f"{a}.{name}({d}){rng.choice(('[0]', '.values', '.indices'))}", name, "scan"
    if r < 0.88:
        return f"torch.logcumsumexp({a}, {d})", "logcumsumexp", "scan"
    return f"torch.cumsum({a}, {d}, dtype=torch.{rng.choice(('float64', 'int64', 'float32'))})", "cumsum", "scan"


# ---- dtypes --------------------------------------------------------------------------------------

def cast(g: Gen):
    a = g.pick()
    t = g.t(a)
    rng = g.rng
    target = rng.choice(FLOAT_DTYPES + INT_DTYPES + ("bool",))
    if target in INT_RANGES and t.is_floating_point():  # in range first: a float out of an int's range is undefined
        lo, hi = INT_RANGES[target]
        lo, hi = max(lo, -2 ** 24), min(hi - 1, 2 ** 24)
        return f"{a}.clamp({lo}, {hi}).to(torch.{target})", "to", "dtype"
    spelled = {"float32": ".float()", "float16": ".half()", "bfloat16": ".bfloat16()", "float64": ".double()",
               "int64": ".long()", "int32": ".int()", "bool": ".bool()"}
    if target in spelled and rng.random() < 0.5:
        return f"{a}{spelled[target]}", "to", "dtype"
    return f"{a}.to(torch.{target})", "to", "dtype"


# ---- tensors built in forward --------------------------------------------------------------------

def creation(g: Gen):
    rng = g.rng
    dev = g.device
    n = rng.choice((1, 7, 8, 15, 17, 33, 65, 0, 1000))
    r = rng.random()
    if r < 0.3:
        k, m = rng.choice((3, 7, 1000003, 2 ** 31 + 11)), rng.choice((2, 5, 3))
        return f"torch.arange({n}, device={dev}) * {k} // {m}", "arange", "creation"
    if r < 0.45:
        dt = rng.choice(("int64", "int32", "float32", "float64", "int8"))
        return f"torch.arange({-n // 2}, {n}, {rng.choice((1, 2, 3))}, device={dev}, dtype=torch.{dt})", "arange", \
            "creation"
    if r < 0.6:
        return f"torch.linspace({rng.choice((-3.0, 0.0, -1.0))}, {rng.choice((1.0, 3.0, 1e4))}, {n}, device={dev})", \
            "linspace", "creation"
    if r < 0.7:
        return f"torch.eye({max(1, n % 17)}, device={dev})", "eye", "creation"
    if g.order and r < 0.9:
        a = g.pick()
        how = rng.choice(("torch.zeros_like({a})", "torch.ones_like({a})", f"torch.full_like({{a}}, {g.scalar(a)})"))
        return how.format(a=a), how.split("(")[0].split(".")[1], "creation"
    dt = rng.choice(("float32", "float16", "int64", "int8", "bool", "uint8"))
    val = "True" if dt == "bool" else rng.choice(("1", "-3", "7")) if dt.startswith(("int", "uint")) else "0.5"
    shape = (rng.choice((3, 7, 16)), rng.choice((1, 5, 9)))
    return f"torch.full({shape}, {val}, device={dev}, dtype=torch.{dt})", "full", "creation"


# Builders by op class (the drawing loop picks a class by CLASS_WEIGHTS, then a builder of it).
BUILDERS = {
    "pointwise": [unary, unary, unary, clamp],
    "binary": [binary, binary, binary, where],
    "view": [view],
    "reduction": [reduction, reduction, softmax],
    "scan": [scan],
    "index": ops_index.INDEX_BUILDERS,
    "inplace": ops_index.INPLACE_BUILDERS,
    "dtype": [cast],
    "resample": ops_nn.RESAMPLE_BUILDERS,
    "matmul": ops_nn.MATMUL_BUILDERS,
    "creation": [creation],
}

"""Functionalize a captured FX graph before lifting: in-place ops become out-of-place, writes to inputs become ordered effects at the end.

Rewriting is about values; mutation is an effect. Each in-place op (`relu_`, `add_`, `x += y`,
`F.relu(x, inplace=True)`, `t[i] = v`, batch_norm's running statistics in training mode) is replaced by
the out-of-place op that computes the value it leaves behind, and every later read of the written
tensor reads that value. A write to an input of the graph (an argument, a parameter, a buffer) is a
true side effect: the input's final value becomes an extra output, and the emitted program writes it
back with `copy_` at the end (lowering/emit.py), in the order of first write.

Aliasing is what makes this unsound, so it is checked, not assumed: ops that may return a view of
their argument (VIEWS) share their argument's storage root; a read of a tensor whose storage was
written, after the tensor was made, through another alias would see the write in eager mode and not
here, and a write through a view of an input would change the input: both block the graph (no sound
rewrite), and `blocked` says which op and why.
"""
from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass

import torch
import torch.fx

from eqsat_test.lowering.targets import is_random, name_of

# Ops whose result may share storage with their first tensor argument (torch-level names, base part).
VIEWS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "transpose", "t", "T", "mT", "H", "mH", "permute", "expand",
    "expand_as", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow", "select", "getitem", "split",
    "split_with_sizes", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "diagonal", "unfold",
    "as_strided", "detach", "contiguous", "movedim", "moveaxis", "swapaxes", "swapdims", "to", "type", "type_as",
    "float", "double", "half", "bfloat16", "int", "long", "short", "bool", "char", "byte", "real", "imag",
    "view_as_real", "view_as_complex", "alias", "data", "requires_grad_", "align_to", "rename",
})
# VIEWS that return their argument itself at its own dtype and device, and a copy at another
_CASTS = frozenset({"to", "type", "type_as", "float", "double", "half", "bfloat16", "int", "long", "short", "bool",
                    "char", "byte"})
_IOPS = {"iadd": "add", "isub": "sub", "imul": "mul", "itruediv": "truediv", "ifloordiv": "floordiv",
         "imod": "mod", "ipow": "pow", "iand": "and_", "ior": "or_", "ixor": "xor", "ilshift": "lshift",
         "irshift": "rshift", "imatmul": "matmul"}
_BN_FUNCTIONAL = torch.ops.aten._native_batch_norm_legit_functional.default
# calls that enter and leave a functorch transform (Dynamo inlines torch.vmap as these): state, not values
_TRANSFORM_STATE = ("torch._functorch.predispatch.", "torch._C._functorch.")


@dataclass(frozen=True)
class Functional:
    """A captured graph made pure. gm: outputs, then the final values of the inputs it writes (None when
    blocked); effects: the names of those inputs (placeholders), in order of first write; rewritten:
    how many in-place ops became out-of-place; blocked: "<op>: why" where no sound functional form exists."""

    gm: torch.fx.GraphModule | None
    effects: tuple[str, ...] = ()
    rewritten: int = 0
    blocked: str = ""


class _Blocked(Exception):
    pass


def _base(node: torch.fx.Node) -> str:
    if node.op == "call_method":
        return str(node.target)
    name = name_of(node.target) if node.op == "call_function" else None
    return (name or getattr(node.target, "__name__", "")).rsplit(".", 1)[-1]


def _val(node) -> object:
    return node.meta.get("example_value", node.meta.get("val")) if isinstance(node, torch.fx.Node) else node


def _meta_like(x):
    """A meta-device stand-in for an FX argument (its example value's shape and dtype), for dtype inference."""
    v = _val(x)
    if isinstance(v, torch.Tensor):
        return torch.empty(tuple(int(s) for s in v.shape), dtype=v.dtype, device="meta")
    if isinstance(x, (list, tuple)):
        return type(x)(_meta_like(a) for a in x)
    return v


class _Functionalizer:
    def __init__(self, gm: torch.fx.GraphModule) -> None:
        self.gm = gm
        self.g = torch.fx.Graph()
        self.env: dict = {}  # old node -> new node (its value at creation)
        self.ident: dict = {}  # old node -> the tensor it is (an in-place result is its target)
        self.root: dict = {}  # old node -> its storage root (a view's is its base's)
        self.born: dict = {}  # old node -> position
        self.writes: dict = {}  # storage root -> [(position, ident written)]
        self.current: dict = {}  # ident -> new node holding its latest value
        self.effects: list = []  # inputs written, in order of first write
        self.rewritten = 0
        self.pos = 0

    # -- values -------------------------------------------------------------------------------
    def read(self, a, user: torch.fx.Node):
        if isinstance(a, torch.fx.Node):
            t, r = self.ident[a], self.root[a]
            for at, who in self.writes.get(r, ()):
                if at > self.born[a] and t not in who:
                    raise _Blocked(f"{_base(user) or user.name}: reads {a.name}, which shares storage with "
                                   f"{', '.join(sorted(w.name for w in who))}, written in place after {a.name} was made")
            return self.current.get(t, self.env[a])
        if isinstance(a, (list, tuple)) and not isinstance(a, torch.Size):
            return type(a)(self.read(x, user) for x in a)
        if isinstance(a, slice):
            return slice(self.read(a.start, user), self.read(a.stop, user), self.read(a.step, user))
        if isinstance(a, dict):
            return {k: self.read(v, user) for k, v in a.items()}
        return a

    def write(self, target: torch.fx.Node, value: torch.fx.Node, user: torch.fx.Node) -> None:
        """`target` now holds `value` (the write of in-place op `user`). A write through `base[idx]` (a direct
        view by indexing) reaches the base too: its new value is `value` scattered into it."""
        t = self.ident[target]
        r = self.root[t]
        who = {t}
        if t is not r:
            if (t.op == "call_function" and t.target is operator.getitem and self.ident.get(t.args[0]) is r
                    and isinstance(_val(t.args[0]), torch.Tensor)):
                base = self.current.get(r, self.env[r])
                self.current[r] = self.setitem(user, base, r, self.read(t.args[1], user), value)
                who.add(r)
            elif r.op in ("placeholder", "get_attr"):
                raise _Blocked(f"{_base(user)}: writes in place through a view of the input {r.name}")
        if r.op in ("placeholder", "get_attr") and r in who:
            if r.op == "get_attr":
                raise _Blocked(f"{_base(user)}: writes in place to the constant {r.name}")
            if r not in self.effects:
                self.effects.append(r)
        self.writes.setdefault(r, []).append((self.pos, frozenset(who)))
        self.current[t] = value
        self.rewritten += 1

    def call(self, op: str, target, args, kwargs=None, like: torch.fx.Node | None = None) -> torch.fx.Node:
        n = self.g.create_node(op, target, tuple(args), dict(kwargs or {}))
        if like is not None:
            n.meta.update(like.meta)
        return n

    def cast_to(self, value: torch.fx.Node, dst: torch.fx.Node, op: str, target, args, kwargs) -> torch.fx.Node:
        """`value` in `dst`'s dtype where the out-of-place op promotes (an in-place op keeps its target's dtype)."""
        want = _val(dst)
        if not isinstance(want, torch.Tensor):
            return value
        try:
            fn = getattr(torch.Tensor, target) if op == "call_method" else target
            got = fn(*_meta_like(list(args)), **{k: _meta_like(v) for k, v in kwargs.items()})
        except Exception:  # noqa: BLE001 - no meta kernel: assume the dtype is kept
            return value
        if isinstance(got, torch.Tensor) and got.dtype != want.dtype:
            return self.call("call_method", "to", (value, want.dtype))
        return value

    # -- in-place forms -------------------------------------------------------------------------
    def inplace(self, n: torch.fx.Node):
        """(written node, new value) for an in-place op, None for an op that writes nothing."""
        name = f"Tensor.{n.target}" if n.op == "call_method" else (name_of(n.target) or "")
        base = _base(n)
        args = [self.read(a, n) for a in n.args]
        kwargs = {k: self.read(v, n) for k, v in n.kwargs.items()}
        if n.op == "call_method":
            if base in ("requires_grad_", "retain_grad"):
                return None
            if not base.endswith("_") or base.endswith("__"):
                return None
            dst = n.args[0]
            if is_random(name):
                raise _Blocked(f"{base}: a random in-place fill")
            if base == "copy_":
                src = args[1]
                sv, dv = _val(n.args[1]), _val(dst)
                if isinstance(sv, torch.Tensor) and isinstance(dv, torch.Tensor) and sv.dtype != dv.dtype:
                    src = self.call("call_method", "to", (src, dv.dtype))
                src = self.call("call_method", "expand_as", (src, args[0]))
                return dst, self.call("call_method", "contiguous", (src,))
            if base == "fill_":
                v = args[1]
                if isinstance(v, torch.fx.Node):
                    e = self.call("call_method", "expand_as", (self.call("call_method", "to", (v, _val(dst).dtype)),
                                                               args[0]))
                    return dst, self.call("call_method", "contiguous", (e,))
                return dst, self.call("call_function", torch.full_like, (args[0], v), like=n)
            if base == "zero_":
                return dst, self.call("call_function", torch.zeros_like, (args[0],), like=n)
            out_of_place = base[:-1]
            if not hasattr(torch.Tensor, out_of_place):
                raise _Blocked(f"{base}: no out-of-place form")
            v = self.call("call_method", out_of_place, args, kwargs, like=n)
            return dst, self.cast_to(v, dst, "call_method", out_of_place, n.args, n.kwargs)
        if n.target is operator.setitem:
            return n.args[0], self.setitem(n, args[0], n.args[0], args[1], args[2])
        if n.op == "call_function" and name.startswith("operator.i") and base in _IOPS:
            if not isinstance(_val(n.args[0]), torch.Tensor):
                return None  # `+=` on a Python number: no tensor is written
            fn = getattr(operator, _IOPS[base])
            v = self.call("call_function", fn, args, kwargs, like=n)
            return n.args[0], self.cast_to(v, n.args[0], "call_function", fn, n.args, n.kwargs)
        if base in ("batch_norm", "instance_norm") and name.startswith(("torch.nn.functional.", "torch.")):
            return self.batch_norm(n, name, args, kwargs)
        bound = _bind(n.target, args, kwargs)
        if bound is not None and bound.arguments.get("inplace") is True:  # F.relu(x, inplace=True) and kin
            if "inplace" in kwargs:
                kwargs = {k: v for k, v in kwargs.items() if k != "inplace"}
            else:
                i = list(inspect.signature(n.target).parameters).index("inplace")
                args = args[:i] + [False] + args[i + 1:]
            return n.args[0], self.call("call_function", n.target, args, kwargs, like=n)
        if base.startswith("_foreach_") and base.endswith("_") and n.args and isinstance(n.args[0], (list, tuple)):
            return self.foreach(n, base, args, kwargs)
        if name.startswith("torch.") and base.endswith("_") and not base.endswith("__"):
            if is_random(name):
                raise _Blocked(f"{base}: a random in-place fill")
            fn = getattr(torch, base[:-1], None)
            if fn is None or not name.startswith("torch.") or name.count(".") != 1:
                raise _Blocked(f"{base}: no out-of-place form")
            return n.args[0], self.call("call_function", fn, args, kwargs, like=n)
        return None

    def foreach(self, n, base, args, kwargs):
        """`torch._foreach_op_(xs, ...)` writes each tensor of xs: the out-of-place `_foreach_op` gives the list of
        new values, item k written into xs[k] (every operand read before any write, as the list op reads them)."""
        fn = getattr(torch, base[:-1], None)
        if fn is None:
            raise _Blocked(f"{base}: no out-of-place form")
        values = self.call("call_function", fn, args, kwargs)
        for k, t in enumerate(n.args[0]):
            if not isinstance(t, torch.fx.Node):
                raise _Blocked(f"{base}: writes into something that is not a tensor of the graph")
            self.write(t, self.call("call_function", operator.getitem, (values, k)), n)
        return None, values

    def batch_norm(self, n, name, args, kwargs):
        """batch_norm in training mode with running statistics writes them: ATen's functional form gives the
        output and the new statistics (the same kernel, the same bits)."""
        bound = _bind(n.target, args, kwargs)
        if bound is None:
            raise _Blocked(f"{name}: arguments not understood")
        a = {**{p.name: p.default for p in inspect.signature(n.target).parameters.values()}, **bound.arguments}
        training = a.get("training", a.get("use_input_stats"))
        rm, rv = a.get("running_mean"), a.get("running_var")
        if not training or (rm is None and rv is None):
            return None
        if name.endswith("instance_norm") or not name.startswith("torch.nn.functional."):
            raise _Blocked(f"{name.rsplit('.', 1)[-1]}: running statistics updated in training mode")
        if rm is None or rv is None or a.get("momentum") is None:
            raise _Blocked("batch_norm: a cumulative running average (momentum None) or one statistic alone")
        old = {p: n.args[i] if i < len(n.args) else n.kwargs.get(p)
               for i, p in enumerate(inspect.signature(n.target).parameters)}
        r = self.call("call_function", _BN_FUNCTIONAL,
                      (a["input"], a.get("weight"), a.get("bias"), rm, rv, True, float(a["momentum"]), float(a["eps"])))
        out = self.call("call_function", operator.getitem, (r, 0), like=n)
        self.write(old["running_mean"], self.call("call_function", operator.getitem, (r, 3)), n)
        self.write(old["running_var"], self.call("call_function", operator.getitem, (r, 4)), n)
        return None, out

    def setitem(self, n, tv, t, idx, v):
        """`t[idx] = v` as a value: slice_scatter / select_scatter for basic indices, masked_fill / masked_scatter
        for a boolean mask, index_put for integer index tensors."""
        tval = _val(t)
        if not isinstance(tval, torch.Tensor):
            raise _Blocked("setitem: on something that is not a tensor")
        items = list(idx) if isinstance(idx, tuple) else [idx]
        if isinstance(v, torch.fx.Node) and isinstance(_val(v), torch.Tensor) and _val(v).dtype != tval.dtype:
            v = self.call("call_method", "to", (v, tval.dtype))
        tensors = [x for x in items if isinstance(x, torch.fx.Node) and isinstance(_val(x), torch.Tensor)]
        if tensors:
            if len(items) == 1 and _val(items[0]).dtype == torch.bool:
                if not isinstance(v, torch.fx.Node):
                    return self.call("call_method", "masked_fill", (tv, items[0], v), like=n)
                if _val(n.args[2]).numel() == 1:
                    return self.call("call_function", torch.where, (items[0], v, tv), like=n)
                return self.call("call_method", "masked_scatter", (tv, items[0], v), like=n)
            if len(tensors) == len(items):
                vv = v if isinstance(v, torch.fx.Node) else self.call("call_function", torch.tensor, (v,),
                                                                      {"dtype": tval.dtype, "device": tval.device})
                return self.call("call_method", "index_put", (tv, tuple(items), vv), like=n)
            raise _Blocked("setitem: an index that mixes tensors with slices")
        if any(x is None for x in items) or sum(x is Ellipsis for x in items) > 1:
            raise _Blocked("setitem: an index with None")
        if Ellipsis in items:
            k = items.index(Ellipsis)
            items = items[:k] + [slice(None)] * (tval.dim() - len(items) + 1) + items[k + 1:]
        return self._put(n, tv, list(tval.shape), items, 0, v, tval)

    def _put(self, n, base, shape, items, d, v, tval):
        if not items:
            if isinstance(v, torch.fx.Node):
                return self.call("call_method", "expand", (v, list(shape)))
            return self.call("call_function", torch.full, (list(shape), v), {"dtype": tval.dtype, "device": tval.device})
        item, rest = items[0], items[1:]
        if isinstance(item, bool) or not isinstance(item, (int, slice)):
            raise _Blocked(f"setitem: index {item!r} not understood")
        if isinstance(item, slice):
            if any(isinstance(x, torch.fx.Node) for x in (item.start, item.stop, item.step)):
                raise _Blocked("setitem: a slice with symbolic bounds")
            start, stop, step = item.indices(int(shape[d]))
            if (start, stop, step) == (0, int(shape[d]), 1):
                return self._put(n, base, shape, rest, d + 1, v, tval)
            sub = self.call("call_function", torch.narrow if step == 1 else operator.getitem,
                            (base, d, start, max(0, stop - start)) if step == 1 else
                            (base, (slice(None),) * d + (slice(start, stop, step),)))
            sub_shape = shape[:d] + [len(range(start, stop, step))] + shape[d + 1:]
            new = self._put(n, sub, sub_shape, rest, d + 1, v, tval)
            return self.call("call_function", torch.slice_scatter, (base, new),
                             {"dim": d, "start": start, "end": stop, "step": step})
        i = item % int(shape[d])
        sub = self.call("call_function", torch.select, (base, d, i))
        new = self._put(n, sub, shape[:d] + shape[d + 1:], rest, d, v, tval)
        return self.call("call_function", torch.select_scatter, (base, new, d, i))

    # -- the pass --------------------------------------------------------------------------------
    def run(self) -> Functional:
        out = None
        for self.pos, n in enumerate(self.gm.graph.nodes):  # noqa: B020 (it sets self.pos; self stays)
            self.born[n] = self.pos
            if n.op in ("placeholder", "get_attr"):
                self.env[n] = self.g.node_copy(n, lambda a: self.env[a])
                self.ident[n], self.root[n] = n, n
                continue
            if n.op == "output":
                out = n
                break
            if n.op != "call_function" and n.op != "call_method":
                raise _Blocked(f"{n.op} {n.target}: not a call")
            if n.op == "call_function" and (name_of(n.target) or "").startswith(_TRANSFORM_STATE):
                raise _Blocked(f"{_base(n)}: a functorch transform's level (vmap, grad) is state the values between "
                               "its calls depend on; rewriting across it is unsound")
            found = self.inplace(n)
            if found is None:
                new = self.call(n.op, n.target, [self.read(a, n) for a in n.args],
                                {k: self.read(v, n) for k, v in n.kwargs.items()}, like=n)
                self.env[n], self.ident[n] = new, n
                first = next((a for a in n.args if isinstance(a, torch.fx.Node)), None)
                self.root[n] = self.root[first] if first is not None and _base(n) in VIEWS and not _copies(n, first) else n
                if first is not None and self.root[n] is first and not isinstance(_val(first), torch.Tensor):
                    self.root[n] = n  # an item of a tuple of fresh tensors (topk, sort) is a tensor of its own
                continue
            dst, value = found
            if dst is None:  # the op wrote what it writes itself (batch_norm's statistics); its result is new
                self.env[n], self.ident[n], self.root[n] = value, n, n
                continue
            self.write(dst, value, n)
            self.env[n], self.ident[n], self.root[n] = value, self.ident[dst], self.root[self.ident[dst]]
        if out is None:
            raise _Blocked("the graph has no output")
        res = self.read(out.args[0], out)
        if self.effects:
            res = tuple(res if isinstance(res, (list, tuple)) else (res,)) + tuple(
                self.current.get(p, self.env[p]) for p in self.effects)
        self.g.output(res)
        self.g.lint()
        return Functional(torch.fx.GraphModule(self.gm, self.g), tuple(p.name for p in self.effects), self.rewritten)


def _copies(n: torch.fx.Node, first: torch.fx.Node) -> bool:
    """Whether an op of VIEWS surely returns a new tensor here: indexing by a tensor or a list (advanced
    indexing gathers a copy), or a cast's result of another dtype or device than its argument (a cast copies;
    `x.view(torch.int32)` reinterprets the same storage)."""
    v, a = _val(n), _val(first)
    if not isinstance(v, torch.Tensor) or not isinstance(a, torch.Tensor):
        return False
    if (v.dtype != a.dtype or v.device != a.device) and _base(n) in _CASTS:
        return True
    if _base(n) != "getitem" or len(n.args) < 2:
        return False
    idx = n.args[1]
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(i, list) or (isinstance(i, torch.fx.Node) and isinstance(_val(i), torch.Tensor))
               for i in items)


def _bind(target, args, kwargs):
    try:
        return inspect.signature(target).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None


def functionalize(gm: torch.fx.GraphModule) -> Functional:
    """The pure form of a captured graph (see the module's doc); `blocked` where none is sound."""
    try:
        return _Functionalizer(gm).run()
    except _Blocked as e:
        return Functional(None, blocked=str(e))

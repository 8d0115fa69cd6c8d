"""Minimization: shrink a failing variant module (drop outputs, cut the program short, bypass ops) while it still fails the same way.

A variant module's `forward` is straight-line code: `name = expr` lines, then `return (...)`.
We read it with `ast`, make smaller programs from it and check each one in a warm worker
subprocess (runners/exec/worker.py, through runners/exec/pool.py's worker, so a compile crash or a hang
costs one check only) with the same backend, device and input set kind. Moves, in order:

1. keep only the output that failed (multi-output programs);
2. cut: return an earlier tensor instead (everything after it dies), searched for the earliest
   cut that still fails;
3. bypass (delta debugging over ops): replace every use of an op's result by one of its tensor
   arguments, or else by an input, of the same shape and dtype; dead lines are dropped.

Every candidate is a complete standalone module (same parameters, same `get_inputs`), so the
smallest failing one is written as the finding's `minimized.py` and its repro. Each finding gets
at most `max_checks` subprocess checks; identical candidate programs are checked once per run.
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import re
import shutil
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from runners.exec.pool import PoolOptions, _Worker

# Finding kinds that minimization tries to preserve (a timeout would cost a timeout per check).
MINIMIZABLE_KINDS = ("miscompile", "seed-miscompile", "compile-crash", "run-crash")

_BINOP = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.MatMult: "matmul", ast.Pow: "pow", ast.BitAnd: "and_", ast.BitOr: "or_",
          ast.BitXor: "xor", ast.LShift: "lshift", ast.RShift: "rshift"}
_UNOP = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert", ast.Not: "not_"}
_CMPOP = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
# Index-producing ops (as in lowering/emit.py): index outputs are judged by the values they select.
_INDEX_OPS = {"argmax", "argmin", "argsort"}
_PAIR_OPS = {"topk", "sort", "max", "min", "kthvalue", "median", "mode", "cummax", "cummin"}


class NotMinimizable(Exception):
    """The module is not in the emitted straight-line format (or its eager run fails here)."""


# ----------------------------------------------------------------------------------------------
# the program: straight-line statements read from the module


@dataclass(frozen=True)
class Stmt:
    name: str
    expr: ast.expr

    def uses(self) -> list[str]:
        return [n.id for n in ast.walk(self.expr) if isinstance(n, ast.Name)]


@dataclass(frozen=True)
class Prog:
    params: tuple[str, ...]
    stmts: tuple[Stmt, ...]
    outputs: tuple[ast.expr, ...]
    container: str = "tuple"  # how the return value is written: "tuple" or "list"

    def defined(self) -> set[str]:
        return set(self.params) | {s.name for s in self.stmts}

    def live(self) -> "Prog":
        """Without the statements no output depends on."""
        need = {n.id for o in self.outputs for n in ast.walk(o) if isinstance(n, ast.Name)}
        keep = []
        for s in reversed(self.stmts):
            if s.name in need:
                keep.append(s)
                need.update(s.uses())
        return replace(self, stmts=tuple(reversed(keep)))

    def returned_names(self) -> list[str]:
        return [o.id for o in self.outputs if isinstance(o, ast.Name)]

    def op_names(self) -> list[str]:
        local = self.defined()
        return [op_name(s.expr, local) for s in self.stmts]

    def forward_source(self) -> str:
        return "\n".join(self._def("forward") + [f"    return {self._ret()}"])

    def _def(self, fname: str) -> list[str]:
        lines = [f"def {fname}({', '.join(self.params)}):"]
        lines += [f"    {s.name} = {ast.unparse(s.expr)}" for s in self.stmts]
        return lines

    def _ret(self) -> str:
        items = [ast.unparse(o) for o in self.outputs]
        if self.container == "list":
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + (",)" if len(items) == 1 else ")")

    def index_sources_source(self) -> str:
        found = self._index_sources()
        head = [f"def index_sources({', '.join(self.params)}):",
                '    """Eager only: for each output that holds indices into a tensor, (that tensor, dim)."""']
        if not found:
            return "\n".join(head + ["    return {}"])
        body = self._def("index_sources")[1:]
        entries = ", ".join(f"{path!r}: ({src}, {dim})" for path, src, dim in found)
        return "\n".join(head + body + [f"    return {{{entries}}}"])

    def _index_sources(self) -> list[tuple[str, str, str]]:
        """(leaf path, source expression, dim) per index output, as lowering/emit.py computes them."""
        defs = {s.name: s.expr for s in self.stmts}
        local = self.defined()
        found = []
        for i, o in enumerate(self.outputs):
            if not isinstance(o, ast.Name) or o.id not in defs:
                continue
            path, e = f"[{i}]", defs[o.id]
            call = _call_parts(e, local)
            if call and call[0] in _INDEX_OPS and call[1]:
                base, args, kw = call
                dim = kw.get("dim", args[1] if len(args) > 1 else None)
                if dim is None and base == "argsort":
                    dim = ast.Constant(-1)
                src = ast.unparse(args[0])
                if dim is None or (isinstance(dim, ast.Constant) and dim.value is None):
                    found.append((path, f"{src}.reshape(-1)", "0"))
                else:
                    found.append((path, src, ast.unparse(dim)))
            elif (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant) and e.slice.value == 1
                  and isinstance(e.value, ast.Name) and e.value.id in defs):
                call = _call_parts(defs[e.value.id], local)
                if call and call[0] in _PAIR_OPS and call[1]:
                    base, args, kw = call
                    if base in ("topk", "sort") or len(args) > 1 or "dim" in kw:
                        pos = 2 if base == "topk" else 1
                        dim = kw.get("dim", args[pos] if len(args) > pos else ast.Constant(-1))
                        if isinstance(dim, ast.Constant) and isinstance(dim.value, int) \
                                and not isinstance(dim.value, bool):
                            found.append((path, ast.unparse(args[0]), repr(dim.value)))
        return found


def _call_parts(e: ast.expr, local: set[str]):
    """(base op name, FX-style positional args (self first for methods), kwargs) of a call, or None."""
    if not isinstance(e, ast.Call):
        return None
    kw = {k.arg: k.value for k in e.keywords if k.arg}
    f = e.func
    if isinstance(f, ast.Attribute):
        if _root(f.value) in local:  # a method: x.argmax(...)
            return f.attr, [f.value, *e.args], kw
        return f.attr, list(e.args), kw
    if isinstance(f, ast.Name):
        return f.id, list(e.args), kw
    return None


def _root(e: ast.expr) -> str | None:
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def _dotted(e: ast.expr) -> str | None:
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        head = _dotted(e.value)
        return f"{head}.{e.attr}" if head else None
    return None


def op_name(e: ast.expr, local: set[str]) -> str:
    """The op a statement's expression calls, named as in the manifest (`torch.nn.functional.relu`,
    `Tensor.tanh`, `operator.add`)."""
    if isinstance(e, ast.BinOp):
        return "operator." + _BINOP.get(type(e.op), type(e.op).__name__.lower())
    if isinstance(e, ast.UnaryOp):
        return "operator." + _UNOP.get(type(e.op), type(e.op).__name__.lower())
    if isinstance(e, ast.Compare) and len(e.ops) == 1:
        return "operator." + _CMPOP.get(type(e.ops[0]), type(e.ops[0]).__name__.lower())
    if isinstance(e, ast.Subscript):
        return "operator.getitem"
    if isinstance(e, ast.Call):
        f = e.func
        if isinstance(f, ast.Attribute) and _root(f.value) in local:
            return f"Tensor.{f.attr}"
        return _dotted(f) or ast.unparse(f)
    return type(e).__name__


def parse_module(src: str) -> tuple[Prog, ast.Module]:
    """The program of an emitted variant module's `forward`."""
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        raise NotMinimizable(f"not valid Python: {e}") from e
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    fwd = fns.get("forward")
    if fwd is None or "index_sources" not in fns:
        raise NotMinimizable("no forward/index_sources functions")
    a = fwd.args
    if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
        raise NotMinimizable("forward has a signature other than plain positional parameters")
    params = tuple(x.arg for x in a.args)
    stmts = []
    for node in fwd.body[:-1]:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise NotMinimizable(f"forward line {node.lineno} is not `name = expr`")
        stmts.append(Stmt(node.targets[0].id, node.value))
    ret = fwd.body[-1] if fwd.body else None
    if not isinstance(ret, ast.Return) or ret.value is None:
        raise NotMinimizable("forward does not end in a return")
    if isinstance(ret.value, (ast.Tuple, ast.List)):
        outputs, container = tuple(ret.value.elts), "list" if isinstance(ret.value, ast.List) else "tuple"
    else:
        raise NotMinimizable("forward does not return a tuple or list")
    names = [s.name for s in stmts]
    if len(set(names)) != len(names) or set(names) & set(params):
        raise NotMinimizable("forward assigns a name twice")
    return Prog(params, tuple(stmts), outputs, container), tree


def render_module(src: str, prog: Prog, note: str = "") -> str:
    """`src` with its `forward` and `index_sources` replaced by `prog`'s."""
    tree = ast.parse(src)
    lines = src.split("\n")
    spans = sorted((n.lineno, n.end_lineno, n.name) for n in tree.body
                   if isinstance(n, ast.FunctionDef) and n.name in ("forward", "index_sources"))
    new = {"forward": prog.forward_source(), "index_sources": prog.index_sources_source()}
    for start, end, name in reversed(spans):
        lines[start - 1:end] = new[name].split("\n")
    text = "\n".join(lines)
    if note:
        text = re.sub(r"\n(import |from )", f"\n# {note}\n\\1", text, count=1)
    return text


# ----------------------------------------------------------------------------------------------
# shapes and dtypes of the program's values (one eager run here, on CPU)


def _load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"eqsat_min_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def value_meta(path: Path, prog: Prog) -> dict[str, tuple]:
    """name -> (shape, dtype) for every tensor input and tensor value of `prog`, run eagerly on CPU."""
    import torch
    try:
        mod = _load_module(path)
        inputs = mod.get_inputs(torch.device("cpu"))
    except Exception as e:
        raise NotMinimizable(f"cannot load {path.name}: {type(e).__name__}: {e}") from e
    ns = dict(vars(mod))
    ns.update(zip(prog.params, inputs))
    meta: dict[str, tuple] = {}
    for p, x in zip(prog.params, inputs):
        if isinstance(x, torch.Tensor):
            meta[p] = (tuple(x.shape), x.dtype)
    torch.manual_seed(0)
    with torch.no_grad():
        for s in prog.stmts:
            try:
                v = eval(compile(ast.Expression(s.expr), "<minimize>", "eval"), ns)
            except Exception as e:
                raise NotMinimizable(f"eager run of {s.name} failed: {type(e).__name__}: {e}") from e
            ns[s.name] = v
            if isinstance(v, torch.Tensor):
                meta[s.name] = (tuple(v.shape), v.dtype)
    return meta


# ----------------------------------------------------------------------------------------------
# moves


class _Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def visit_Name(self, node: ast.Name):
        if node.id in self.mapping:
            return ast.copy_location(ast.Name(self.mapping[node.id], node.ctx), node)
        return node


def _rename(e: ast.expr, mapping: dict[str, str]) -> ast.expr:
    import copy
    return _Rename(mapping).visit(copy.deepcopy(e))


def keep_outputs(prog: Prog, idx: list[int]) -> Prog:
    return replace(prog, outputs=tuple(prog.outputs[i] for i in idx)).live()


def cut_at(prog: Prog, name: str) -> Prog:
    return replace(prog, outputs=(ast.Name(name, ast.Load()),)).live()


def bypass(prog: Prog, mapping: dict[str, str]) -> Prog:
    """Every use of a key replaced by its value (resolved through chains); the keys' lines die."""
    def resolve(n: str) -> str:
        seen = set()
        while n in mapping and n not in seen:
            seen.add(n)
            n = mapping[n]
        return n
    full = {k: resolve(k) for k in mapping}
    stmts = tuple(Stmt(s.name, _rename(s.expr, full)) for s in prog.stmts if s.name not in full)
    outputs = tuple(_rename(o, full) for o in prog.outputs)
    return replace(prog, stmts=stmts, outputs=outputs).live()


def bypass_choices(prog: Prog, meta: dict[str, tuple]) -> dict[str, str]:
    """op result -> a value of the same shape and dtype to use instead: one of its own tensor
    arguments (the op is skipped), else the nearest input (the op and what feeds it die)."""
    out: dict[str, str] = {}
    order = {n: i for i, n in enumerate(prog.params)}
    for s in prog.stmts:
        m = meta.get(s.name)
        if m is None:
            continue
        args = [u for u in dict.fromkeys(s.uses()) if u != s.name and meta.get(u) == m]
        if args:
            out[s.name] = args[0]
            continue
        same = [p for p in prog.params if meta.get(p) == m]
        if same:
            out[s.name] = min(same, key=lambda p: order[p])
    return out


# ----------------------------------------------------------------------------------------------
# checking candidates in warm worker subprocesses


class CheckPool:
    """Warm worker subprocesses kept across candidates and findings; results cached by program."""

    def __init__(self, opts: PoolOptions, log: Callable[[str], None] = lambda s: None) -> None:
        self.opts = opts
        self.workers = [_Worker(k, opts, log) for k in range(max(1, opts.jobs))]
        self.cache: dict[str, dict] = {}
        self.checks = 0

    def run(self, tasks: list[dict]) -> list[dict]:
        """Run up to len(workers) tasks at once; a worker that crashes or hangs is restarted."""
        results: list[dict | None] = [None] * len(tasks)
        for lo in range(0, len(tasks), len(self.workers)):
            chunk = tasks[lo:lo + len(self.workers)]
            threads = []
            for k, t in enumerate(chunk):
                def go(i=lo + k, t=t, w=self.workers[k]):
                    try:
                        results[i] = w.run(t)
                    except Exception as e:  # a worker that cannot start
                        results[i] = {"status": "internal-error", "input_sets": [],
                                      "error": {"type": type(e).__name__, "message": str(e)}}
                th = threading.Thread(target=go, daemon=True)
                th.start()
                threads.append(th)
            for th in threads:
                th.join()
            self.checks += len(chunk)
        return results  # type: ignore[return-value]

    def close(self) -> None:
        for w in self.workers:
            w.kill()


def outcome(result: dict) -> tuple:
    """How a worker result fails: ("miscompile",), (status, error type), or ("ok",)/("other", ...)."""
    status = result.get("status")
    if status in ("compile-crash", "run-crash", "process-crash"):
        return ("run-crash" if status == "process-crash" else status, (result.get("error") or {}).get("type", ""))
    if status != "ok":
        return ("other", status)
    sets = result.get("input_sets") or []
    if any(s.get("kind") == "nondeterministic" for s in sets):
        return ("nondeterministic",)
    if any(not s.get("ok") for s in sets):
        return ("miscompile",)
    return ("ok",)


def target_outcome(finding: dict) -> tuple:
    kind = finding["kind"]
    if kind in ("miscompile", "seed-miscompile"):
        return ("miscompile",)
    if kind == "run-crash" and (finding.get("error") or {}).get("type") == "ProcessCrash":
        return ("run-crash", "ProcessCrash")
    return (kind, (finding.get("error") or {}).get("type", ""))


@dataclass
class MinResult:
    source: str  # the smallest failing module (the original when nothing smaller failed)
    ops: list[str]  # its op names, in program order
    checks: int  # subprocess checks spent on this finding
    steps: list[str] = field(default_factory=list)  # accepted moves
    file: Path | None = None  # where `source` was written (None: nothing smaller found)
    failing_inputs: str | None = None  # the failing input set of the minimized program
    reason: str = ""  # why minimization stopped early or was skipped


def _kind_of_set(name: str | None) -> str | None:
    if not name:
        return None
    head = name.split("-", 1)[0]
    return head if head in ("given", "random", "special") else None


def minimize(variant_file: Path, finding: dict, task_base: dict, pool: CheckPool, work: Path, *,
             max_checks: int = 12, log: Callable[[str], None] = lambda s: None) -> MinResult:
    """The smallest program derived from `variant_file` that still fails like `finding`.

    task_base: the worker task fields to keep (backend, device, seed, input_kinds, is_param)."""
    src = variant_file.read_text()
    prog, _ = parse_module(src)
    full_ops = prog.op_names()
    result = MinResult(source=src, ops=full_ops, checks=0)
    if finding["kind"] not in MINIMIZABLE_KINDS:
        result.reason = f"{finding['kind']} findings are not minimized"
        return result
    meta = value_meta(variant_file, prog)
    work.mkdir(parents=True, exist_ok=True)
    m = re.search(r'INPUTS_FILE = Path\(__file__\)\.with_name\("([^"]+)"\)', src)
    if m and (variant_file.parent / m.group(1)).is_file() and not (work / m.group(1)).exists():
        shutil.copy(variant_file.parent / m.group(1), work / m.group(1))
    target = target_outcome(finding)
    kinds = list(task_base.get("input_kinds") or ["given", "random", "special"])
    if target == ("miscompile",) and _kind_of_set(finding.get("input_set")) in kinds:
        kinds = [_kind_of_set(finding["input_set"])]  # the same input set as the finding
    key_base = f"{task_base['backend']}|{task_base['device']}|{task_base.get('seed', 0)}|{','.join(kinds)}"
    best = prog
    best_src = src

    def check(cands: list[Prog]) -> Prog | None:
        """The first candidate (in list order) that still fails like the finding, or None."""
        nonlocal best_src
        todo: list[dict] = []
        texts, keys = [], []
        for c in cands:
            text = render_module(src, c, note="minimized by eqsat-test from " + variant_file.name)
            k = hashlib.sha256((key_base + "\n" + c.forward_source()).encode()).hexdigest()[:16]
            texts.append(text)
            keys.append(k)
            if k in pool.cache or any(t["_key"] == k for t in todo) or result.checks + len(todo) >= max_checks:
                continue
            f = work / f"cand_{k}.py"
            f.write_text(text)
            todo.append({**task_base, "id": f"minimize:{k}", "variant": finding["variant"], "file": str(f),
                         "input_kinds": kinds, "save_eager": None, "save_compiled": str(work / f"out_{k}"),
                         "_key": k})
        if todo:
            runs = pool.run([{kk: vv for kk, vv in t.items() if kk != "_key"} for t in todo])
            for t, r in zip(todo, runs):
                pool.cache[t["_key"]] = r
            result.checks += len(todo)
        for c, text, k in zip(cands, texts, keys):
            r = pool.cache.get(k)
            if r is not None and outcome(r) == target:
                best_src = text
                bad = [s for s in r.get("input_sets", []) if not s.get("ok") and s.get("inputs_file")]
                if bad:
                    result.failing_inputs = bad[0]["inputs_file"]
                return c
        return None

    def budget() -> int:
        return max_checks - result.checks

    width = max(1, len(pool.workers))
    # 1. keep only the failing output
    if len(best.outputs) > 1 and budget() > 0:
        lm = re.match(r"\[(\d+)\]", finding.get("leaf") or "")
        order = [int(lm.group(1))] if lm and int(lm.group(1)) < len(best.outputs) else []
        order += [i for i in range(len(best.outputs)) if i not in order]
        got = check([keep_outputs(best, [i]) for i in order[:width]])
        if got is not None:
            best = got
            result.steps.append("kept one output")
    # 2. cut: return an earlier tensor value instead. Search for the earliest cut that still
    # fails, `width` cut points per round (binary search for one worker). Failing is not
    # monotone in the cut point, so this is a heuristic; every accepted cut was checked.
    base = best
    cuts = [s.name for s in base.stmts if s.name in meta and s.name not in base.returned_names()]
    lo, hi = 0, len(cuts)  # the earliest failing cut is looked for in cuts[lo:hi]
    while lo < hi and budget() > 0:
        n = max(1, min(width, hi - lo, budget()))
        picks = sorted({lo + (hi - lo) * (j + 1) // (n + 1) for j in range(n)})
        cands = [cut_at(base, cuts[p]) for p in picks]
        got = check(cands)
        if got is None:
            lo = picks[-1] + 1
            continue
        i = next(j for j, c in enumerate(cands) if c is got)
        best = got
        result.steps.append(f"cut at {cuts[picks[i]]}")
        lo = picks[i - 1] + 1 if i > 0 else lo
        hi = picks[i]
    # 3. bypass ops, ddmin-style over the ops that can be bypassed
    gran = 2
    while budget() > 0:
        choices = bypass_choices(best, meta)
        names = [s.name for s in best.stmts if s.name in choices]
        if not names:
            break
        gran = min(gran, len(names))
        chunks = [names[i * len(names) // gran:(i + 1) * len(names) // gran] for i in range(gran)]
        chunks = [c for c in chunks if c]
        cands = []
        for c in chunks:
            cand = bypass(best, {n: choices[n] for n in c})
            if cand.forward_source() != best.forward_source():
                cands.append((c, cand))
        got = None
        for lo_i in range(0, len(cands), width):
            if budget() <= 0:
                break
            batch = cands[lo_i:lo_i + width]
            got = check([c for _, c in batch])
            if got is not None:
                chunk = next(c for c, cand in batch if cand is got)
                result.steps.append(f"bypassed {', '.join(chunk)}")
                best = got
                break
        if got is not None:
            gran = max(gran - 1, 2)
            continue
        if gran >= len(names):
            break
        gran = min(len(names), gran * 2)
    if best is not prog:
        result.source = best_src
        result.ops = best.op_names()
        result.file = work / "minimized.py"
        result.file.write_text(best_src)
    log(f"minimized {finding['variant']} ({finding['kind']}): {len(full_ops)} -> {len(result.ops)} ops "
        f"in {result.checks} checks")
    return result


# ----------------------------------------------------------------------------------------------
# the pipeline's entry point


def minimize_findings(findings: list[dict], bundle: Path, manifest: dict, tasks: list[dict], opts, work: Path,
                      log: Callable[[str], None] = lambda s: None) -> None:
    """Minimize each finding in place: adds `min_ops`, `min_checks`, `minimized_file` (when a
    smaller program still fails), and points `failing_inputs` at the minimized failing input set.

    opts: ExecOptions (jobs, timeout, env, minimize_checks, minimize_max_findings)."""
    by_task = {(t["variant"], t["backend"], t["device"]): t for t in tasks}
    variants = {v["id"]: v for v in manifest["variants"]}
    todo = [f for f in findings if f["kind"] in MINIMIZABLE_KINDS]
    # Seeds first: their minimized programs are the likeliest to be shared by the variants' ones.
    todo.sort(key=lambda f: (not variants[f["variant"]]["seed"], f["variant"]))
    cap = getattr(opts, "minimize_max_findings", 16)
    pool = CheckPool(PoolOptions(jobs=max(1, min(opts.jobs, 4)), timeout=opts.timeout, env=opts.env), log)
    try:
        for k, f in enumerate(todo):
            v = variants[f["variant"]]
            f["min_ops"] = None
            if k >= cap:
                f["min_skipped"] = f"more than {cap} findings"
                continue
            t = by_task[(f["variant"], f["backend"], f["device"])]
            base = {kk: t[kk] for kk in ("backend", "device", "seed", "input_kinds", "is_param")}
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{f['variant']}__{f['backend']}__{f['device']}")
            try:
                res = minimize(bundle / v["file"], f, base, pool, work / safe,
                               max_checks=getattr(opts, "minimize_checks", 12), log=log)
            except NotMinimizable as e:
                f["min_skipped"] = str(e)
                log(f"not minimized {f['variant']}: {e}")
                continue
            f["min_ops"] = res.ops
            f["min_checks"] = res.checks
            if res.file is not None:
                f["minimized_file"] = str(res.file)
                f["min_steps"] = res.steps
                if res.failing_inputs:
                    f["failing_inputs"] = res.failing_inputs
    finally:
        pool.close()

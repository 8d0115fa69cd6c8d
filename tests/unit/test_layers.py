"""The code's shape: inside the one package eqsat_test, imports run one way (codegen_templates <- lowering <- rewrite, rules, hunt <- runners, and inside runners its parts in RUNNERS_ORDER), no import cycle, no module over 600 lines, no use of another module's private names, and project imports inside functions only where a comment says why."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG = "eqsat_test"
LAYERS = {"codegen_templates": 0, "lowering": 1, "rewrite": 2, "rules": 2, "hunt": 2, "runners": 3}
MAX_LINES = 600
LAZY_MARKER = "# Imports inside functions:"  # a module-level comment explaining all of a module's lazy imports


def _modules() -> dict[str, Path]:
    mods = {}
    for top in LAYERS:
        for f in (REPO / PKG / top).rglob("*.py"):
            parts = f.relative_to(REPO).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return mods


def _resolve(name: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a `from ... import` in module `name` (file `path`) imports from."""
    base = node.module or ""
    if node.level:
        pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
    return base


def _imports(name: str, path: Path, mods: dict) -> list[tuple[str, ast.AST, bool]]:
    """(imported project module, node, inside a function) for every import in the file."""
    tree = ast.parse(path.read_text())
    out = []

    def visit(node: ast.AST, in_fn: bool) -> None:
        for child in ast.iter_child_nodes(node):
            fn = in_fn or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(name, path, child)
                targets = [base] + [f"{base}.{a.name}" for a in child.names]
            else:
                visit(child, fn)
                continue
            for t in targets:
                if t in mods and t != name:
                    out.append((t, child, in_fn))
    visit(tree, False)
    return out


def _top(module: str) -> str:
    """The top-level sub-package of a module: eqsat_test.runners.exec.pool -> runners."""
    return module.split(".")[1]


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {m: {t for t, _, _ in _imports(m, p, mods)} for m, p in mods.items()}


def test_imports_follow_the_layers():
    bad = [f"{m} imports {t}" for m, deps in _graph().items() for t in deps
           if LAYERS[_top(t)] > LAYERS[_top(m)]]
    assert not bad, "upward imports: " + "; ".join(sorted(bad))


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = dfs(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            cycle = dfs(v)
            assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_runners_never_import_egglog_directly():
    for m, p in _modules().items():
        if _top(m) == "runners":
            tree = ast.parse(p.read_text())
            names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
            names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
            assert not any(x == "egglog" or x.startswith("egglog.") for x in names), m


def test_no_module_over_600_lines():
    long = {m: n for m, p in _modules().items() if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_project_imports_inside_functions_say_why():
    mods = _modules()
    silent = []
    for m, p in mods.items():
        lines = p.read_text().splitlines()
        if any(line.startswith(LAZY_MARKER) for line in lines):  # the module says why, once for all
            continue
        for t, node, in_fn in _imports(m, p, mods):
            if in_fn:
                text = " ".join(lines[node.lineno - 1: node.end_lineno])
                above = lines[node.lineno - 2] if node.lineno > 1 else ""
                if "#" not in text and not above.strip().startswith("#"):
                    silent.append(f"{p.relative_to(REPO)}:{node.lineno} imports {t}")
    assert not silent, "project imports inside functions without a comment saying why:\n" + "\n".join(sorted(set(silent)))


# Inside runners/, its parts in order from the bottom: a part may import its own rank or below, never above.
# The package's face, the records and the wire protocol at the ground; the oracle judges values; exec runs
# variant modules (the pool, batches); checks make and run tasks beyond one eager-vs-compiled run; the
# worker (a subprocess's main) runs every task kind; findings write what was found; the pipeline drives
# one run; campaigns drive many; the CLI is the top.
RUNNERS_ORDER = {
    "": 0, "records": 0, "protocol": 0,
    "oracle": 1,
    "exec": 2,
    "checks": 3,
    "worker": 4,
    "findings": 5,
    "judging": 6,
    "pipeline": 6,
    "campaign": 7,
    "cli": 8,
}


def _part(module: str) -> str:
    """A runners module's part: eqsat_test.runners.exec.pool -> exec; eqsat_test.runners -> ''."""
    return module.split(".")[2] if module.count(".") >= 2 else ""


def test_runners_parts_follow_their_order():
    graph = _graph()
    runners = [m for m in graph if _top(m) == "runners"]
    unknown = sorted({_part(m) for m in runners} - set(RUNNERS_ORDER))
    assert not unknown, f"runners parts without a place in RUNNERS_ORDER: {unknown}"
    bad = [f"{m} imports {t}" for m in runners for t in graph[m]
           if _top(t) == "runners" and RUNNERS_ORDER[_part(t)] > RUNNERS_ORDER[_part(m)]]
    assert not bad, "upward imports inside runners: " + "; ".join(sorted(bad))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_module_imports_another_modules_private_name():
    """A leading underscore says "this module's own": a name that another module needs is public."""
    mods = _modules()
    bad = []
    for m, p in mods.items():
        tree = ast.parse(p.read_text())
        where = p.relative_to(REPO)
        modules_here: dict[str, str] = {}  # a local name bound to a project module -> that module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods and a.asname:
                        modules_here[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(m, p, node)
                if base not in mods:
                    continue
                for a in node.names:
                    if f"{base}.{a.name}" in mods:  # a module, from its package
                        modules_here[a.asname or a.name] = f"{base}.{a.name}"
                    elif _private(a.name):
                        bad.append(f"{where}:{node.lineno} imports {base}.{a.name}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in modules_here):
                bad.append(f"{where}:{node.lineno} uses {modules_here[node.value.id]}.{node.attr}")
    assert not bad, "another module's private names:\n" + "\n".join(sorted(set(bad)))

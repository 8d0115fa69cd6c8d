"""The code's shape: inside the one package eqsat_test, imports run one way (codegen_templates <- lowering <- rewrite <- runners), no import cycle, no module over 600 lines, and project imports inside functions only where a comment says why."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG = "eqsat_test"
LAYERS = {"codegen_templates": 0, "lowering": 1, "rewrite": 2, "rules": 2, "runners": 3}
MAX_LINES = 600
LAZY_MARKER = "# Imports inside functions:"  # a module-level comment explaining all of a module's lazy imports


def _modules() -> dict[str, Path]:
    mods = {}
    for top in LAYERS:
        for f in (REPO / PKG / top).rglob("*.py"):
            parts = f.relative_to(REPO).with_suffix("").parts
            mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return mods


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
                base = child.module or ""
                if child.level:
                    pkg = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                    base = ".".join(pkg[: len(pkg) - child.level + 1] + ([base] if base else []))
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

"""The house has no import circles: no Python module of ours and no browser module reaches
itself through its imports (lazy imports inside functions count too: they hide a circle,
they do not remove it)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON_ROOTS = [ROOT / "py", ROOT / "export"]
JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}/[^"']+|/web/[^"']+)["']""")


def python_modules() -> dict[str, Path]:
    modules = {}
    for base in PYTHON_ROOTS:
        for path in base.rglob("*.py"):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def python_graph() -> dict[str, set[str]]:
    modules = python_modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
            else:
                continue
            edges |= {target for target in targets if target in modules and target != name}
        graph[name] = edges
    return graph


def js_graph() -> dict[str, set[str]]:
    graph = {}
    for path in (ROOT / "web").rglob("*.js"):
        edges = set()
        for spec in JS_IMPORT.findall(path.read_text(encoding="utf-8")):
            target = (ROOT / spec.lstrip("/")) if spec.startswith("/") else (path.parent / spec)
            edges.add(str(target.resolve().relative_to(ROOT)))
        graph[str(path.relative_to(ROOT))] = edges
    return graph


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state and (circle := visit(target)):
                return circle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (circle := visit(node)):
            return circle
    return None


def test_python_modules_import_in_one_direction():
    graph = python_graph()
    assert "botpsy_export.sources" in graph and "botpsy_agent.tools.python_sandbox" in graph
    assert find_circle(graph) is None, " -> ".join(find_circle(graph))


def test_browser_modules_import_in_one_direction():
    graph = js_graph()
    assert "web/runtime/model-worker.js" in graph
    assert find_circle(graph) is None, " -> ".join(find_circle(graph))


def test_the_circle_finder_finds_a_circle():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None

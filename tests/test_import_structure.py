"""The package's layering, checked on the import graph of src/uji (issue 9). Every
import counts — at module level, inside a function (lazy) and under TYPE_CHECKING
(type-only) — since each one ties the importing module to the imported one:

- `uji.agent` imports nothing from `uji.lua` or `uji.tui`;
- `uji.lua` imports nothing from `uji.tui`;
- the core (`uji.tools`, `uji.agent`, `uji.wires`, `uji.store`) is in no import cycle.

`python -m tests.test_import_structure` prints what breaks these rules, and every cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import uji

SRC = Path(uji.__file__).resolve().parent
CORE = ("uji.tools", "uji.agent", "uji.wires", "uji.store")

Graph = dict[str, dict[str, int]]  # module -> {imported module: line of its first import}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(name: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """(imported uji module, line) for every import in the file, wherever it stands.
    `from a import b` is the module a.b when there is one, else a."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "uji" or alias.name.startswith("uji."):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "uji" or target.startswith("uji."):
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    yield (sub if sub in known else target), node.lineno


def graph() -> Graph:
    files = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}
    out: Graph = {}
    for name, path in files.items():
        edges: dict[str, int] = {}
        for target, line in imports_of(name, path, set(files)):
            if target != name:
                edges.setdefault(target, line)
        out[name] = edges
    return out


def within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def crossings(g: Graph, source: str, forbidden: tuple[str, ...]) -> list[str]:
    """Each import from a module of `source` into one of `forbidden`, as file:line."""
    return [
        f"src/{src.replace('.', '/')}.py:{line}: {src} imports {dst}"
        for src, edges in sorted(g.items())
        if within(src, source)
        for dst, line in sorted(edges.items())
        if any(within(dst, f) for f in forbidden)
    ]


def cycles(g: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def enter(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)

    for root in sorted(g):
        if root in index:
            continue
        enter(root)
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(g[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in g:
                    continue
                if child not in index:
                    enter(child)
                    work.append((child, iter(sorted(g[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while not component or component[-1] != node:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def core_cycles(g: Graph) -> list[list[str]]:
    return [c for c in cycles(g) if any(within(m, p) for m in c for p in CORE)]


# The checker, on small graphs --------------------------------------------------------


def test_the_graph_holds_every_kind_of_import() -> None:
    g = graph()
    assert {"uji.agent.loop", "uji.lua.runtime", "uji.tui.app", "uji.tools.policy"} <= set(g)
    assert "uji.lua.runtime" in g["uji.lua.api.core"]  # from uji.lua.runtime import ApiError
    assert "uji.tools.verdict" in g["uji.tools.policy"]  # a name imported from a module
    # Relative, lazy and type-only imports are resolved the same way.
    tree = {"uji.p.a", "uji.p.b", "uji.q"}
    src = SRC / "p" / "a.py"
    code = "from . import b\ndef f():\n    from ..q import x\nif TYPE_CHECKING:\n    import uji.q\n"
    found = list(_imports_in(code, "uji.p.a", src, tree))
    assert found == [("uji.p.b", 1), ("uji.q", 3), ("uji.q", 5)]


def _imports_in(code: str, name: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        file = Path(d) / path.name
        file.write_text(code)
        yield from imports_of(name, file, known)


def test_the_checker_finds_a_crossing_and_a_cycle() -> None:
    g: Graph = {
        "uji.agent.loop": {"uji.lua.api.tool": 3},
        "uji.lua.api.tool": {"uji.agent.loop": 7},
        "uji.tools.base": {"uji.tools.results": 1},
        "uji.tools.results": {},
    }
    assert crossings(g, "uji.agent", ("uji.lua", "uji.tui")) == [
        "src/uji/agent/loop.py:3: uji.agent.loop imports uji.lua.api.tool"
    ]
    assert core_cycles(g) == [["uji.agent.loop", "uji.lua.api.tool"]]
    assert core_cycles({"a": {"b": 1}, "b": {"a": 1}}) == []  # not the core


# The package --------------------------------------------------------------------------


def test_the_agent_imports_nothing_from_lua_or_the_tui() -> None:
    assert crossings(graph(), "uji.agent", ("uji.lua", "uji.tui")) == []


def test_the_lua_bridge_imports_nothing_from_the_tui() -> None:
    assert crossings(graph(), "uji.lua", ("uji.tui",)) == []


def test_the_core_is_in_no_import_cycle() -> None:
    assert core_cycles(graph()) == []


def test_the_core_imports_nothing_from_the_app_the_lua_bridge_or_the_tui() -> None:
    g = graph()
    assert [
        line for package in CORE for line in crossings(g, package, ("uji.app", "uji.lua", "uji.tui"))
    ] == []


if __name__ == "__main__":
    g = graph()
    for line in crossings(g, "uji.agent", ("uji.lua", "uji.tui")) + crossings(g, "uji.lua", ("uji.tui",)):
        print(line)
    for c in cycles(g):
        print(f"cycle of {len(c)}{' (core)' if c in core_cycles(g) else ''}: {' '.join(c)}")

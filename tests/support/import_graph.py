"""The import graph of Margin's own packages, read from the source with ``ast``, and its
import circles (strongly connected groups of modules).

Every import counts, at module level and inside functions alike (a lazy import still ties
the two modules together), except those under ``if TYPE_CHECKING:`` (never run). Relative
imports are resolved against the importing module's package, and ``from package import
name`` points at the submodule ``package.name`` when there is one, at the package otherwise.
Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``; those implicit edges are
left out, as other import checkers do, since counting them would put every package in a
circle with its submodules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def package(self) -> str:
        """The package relative imports start from."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def modules_under(root: Path, *packages: str) -> dict[str, Module]:
    """Every module of ``packages`` (folders under ``root``), by dotted name."""
    found: dict[str, Module] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join(parts)
            found[name] = Module(name, path)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(
    tree: ast.AST, type_checking: bool = False
) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, in functions too, but not under ``if TYPE_CHECKING:`` (unless
    ``type_checking``)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if not type_checking and isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)  # the ``else:`` branch does run
            continue
        stack.extend(ast.iter_child_nodes(node))


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imports_of(module: Module, known: Iterable[str], type_checking: bool = False) -> set[str]:
    """The modules among ``known`` that ``module`` imports (itself left out); with
    ``type_checking``, the imports only type checkers run count too."""
    names = set(known)
    found: set[str] = set()
    tree = ast.parse(module.path.read_text("utf-8"), str(module.path))
    for node in _import_nodes(tree, type_checking):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        target = _absolute(module, node)
        for alias in node.names:
            sub = f"{target}.{alias.name}"
            found.add(sub if sub in names else target)
    return {name for name in found if name in names and name != module.name}


def import_graph(modules: dict[str, Module], type_checking: bool = False) -> dict[str, set[str]]:
    return {name: imports_of(module, modules, type_checking) for name, module in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected groups of more than one module (Tarjan, iterative), each
    sorted, the list sorted: the same graph always gives the same answer."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[tuple[str, ...]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(tuple(sorted(group)))
    return sorted(groups)


def circles_in(
    package: str, root: Path = ROOT, type_checking: bool = False
) -> list[tuple[str, ...]]:
    """The import circles among the modules of ``package`` (``core``, ``desktop``)."""
    return circles(import_graph(modules_under(root, package), type_checking))


def describe(groups: Iterable[tuple[str, ...]], graph: dict[str, set[str]] | None = None) -> str:
    """One paragraph per circle, naming its modules (and, given the graph, who imports whom
    inside it), for a test's failure message."""
    lines = []
    for number, group in enumerate(groups, 1):
        lines.append(f"circle {number} ({len(group)} modules): " + " ↔ ".join(group))
        if graph is not None:
            members = set(group)
            for name in group:
                inside = sorted(graph.get(name, set()) & members)
                lines.append(f"    {name} imports {', '.join(inside)}")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m tests.support.import_graph [--type-checking]
    import sys

    typing_too = "--type-checking" in sys.argv
    for top in ("core", "desktop"):
        graph = import_graph(modules_under(ROOT, top), typing_too)
        found = circles(graph)
        print(f"{top}: {len(found)} import circles")
        if found:
            print(describe(found, graph))

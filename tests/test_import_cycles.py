"""No import circles: no group of modules imports each other in a ring, counting the imports
inside functions too (tests/support/import_graph.py says what counts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_graph import ROOT, circles, describe, import_graph, modules_under


def found_in(package: str) -> tuple[list[tuple[str, ...]], dict[str, set[str]]]:
    graph = import_graph(modules_under(ROOT, package))
    return circles(graph), graph


@pytest.mark.parametrize("package", ["core", "desktop"])
def test_no_import_circle(package: str) -> None:
    groups, graph = found_in(package)
    assert groups == [], f"import circles in {package}/:\n" + describe(groups, graph)


def write(root: Path, name: str, text: str) -> None:
    path = root.joinpath(*name.split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def test_the_checker_sees_lazy_relative_and_submodule_imports(tmp_path: Path) -> None:
    """A ring made of a lazy import, a relative import and ``from package import module``
    is found and named; one closed only under ``if TYPE_CHECKING:`` is not."""
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/a.py", "def f():\n    from .sub import b\n")
    write(tmp_path, "pkg/sub/__init__.py", "")
    write(tmp_path, "pkg/sub/b.py", "from pkg import c\n")
    write(tmp_path, "pkg/c.py", "import pkg.a\n")
    write(tmp_path, "pkg/d.py", "from typing import TYPE_CHECKING\nfrom pkg import e\n")
    write(
        tmp_path,
        "pkg/e.py",
        "import typing\nif typing.TYPE_CHECKING:\n    from pkg import d\nelse:\n    pass\n",
    )
    graph = import_graph(modules_under(tmp_path, "pkg"))
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.e"] == set()
    groups = circles(graph)
    assert groups == [("pkg.a", "pkg.c", "pkg.sub.b")]
    message = describe(groups, graph)
    assert "pkg.a ↔ pkg.c ↔ pkg.sub.b" in message
    assert "pkg.sub.b imports pkg.c" in message
    # counted for type checkers too, the ring d ↔ e appears
    typed = circles(import_graph(modules_under(tmp_path, "pkg"), type_checking=True))
    assert typed == [("pkg.a", "pkg.c", "pkg.sub.b"), ("pkg.d", "pkg.e")]


def test_the_checker_resolves_parent_relative_imports_and_names(tmp_path: Path) -> None:
    """``from .. import x`` and ``from ..mod import name`` (a name, not a module) point at
    the right modules, and the ``else:`` of a TYPE_CHECKING test still counts."""
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/top.py", "from pkg.inner.leaf import thing\n")
    write(tmp_path, "pkg/inner/__init__.py", "from .leaf import thing\n")
    write(
        tmp_path,
        "pkg/inner/leaf.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    pass\nelse:\n"
        "    from .. import top\nthing = 1\n",
    )
    graph = import_graph(modules_under(tmp_path, "pkg"))
    assert graph["pkg.inner"] == {"pkg.inner.leaf"}
    assert graph["pkg.inner.leaf"] == {"pkg.top"}
    assert circles(graph) == [("pkg.inner.leaf", "pkg.top")]

"""The layers of ``core`` point one way: desktop → core.agent → core.search/core.books →
core.store → the shared records (``core.domain``) and the small base modules.

Each layer is imported in a fresh interpreter with every higher layer blocked by a meta-path
finder, so an import of a higher layer at module level fails there. Imports inside functions
(the lazy ones) are checked from the source. A ``core`` module or package not named in
``LAYERS`` (``core.app``, ``core.cli``, ``core.export``, …) sits on top, beside ``desktop``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# lowest first; packages listed here take all their submodules with them
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "core.domain",
            "core.errors",
            "core.labels",
            "core.log",
            "core.paths",
            "core.processes",
            "core.progress",
            "core.prompts",
            "core.settings",
            "core.api_key",
            "core.version",
        ),
    ),
    ("store", ("core.store",)),
    ("books and search", ("core.books", "core.search")),
    ("agent", ("core.agent",)),
]


def top_level() -> list[str]:
    """Every module and package directly under ``core`` (and ``desktop``) not in a layer."""
    layered = {name for _, names in LAYERS for name in names}
    found = ["desktop"]
    for path in sorted((ROOT / "core").iterdir()):
        if path.name.startswith(("_", ".")):
            continue
        if path.suffix == ".py" or (path / "__init__.py").exists():
            name = f"core.{path.stem}"
            if name not in layered:
                found.append(name)
    return found


def layer_of(module: str) -> int:
    for index, (_, names) in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return index
    return len(LAYERS)  # on top


def higher_than(index: int) -> list[str]:
    names = [n for _, layer in LAYERS[index + 1 :] for n in layer]
    return names + top_level()


IMPORT_LAYER = """
import importlib, importlib.abc, json, pkgutil, sys

blocked = tuple(json.loads(sys.argv[1]))
wanted = json.loads(sys.argv[2])


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if any(name == b or name.startswith(b + ".") for b in blocked):
            raise ImportError(f"{name} belongs to a higher layer")
        return None


sys.meta_path.insert(0, Blocker())
imported, failed = [], []
for top in wanted:
    names = [top]
    try:
        module = importlib.import_module(top)
    except ImportError as exc:
        failed.append(f"{top}: {exc}")
        continue
    if hasattr(module, "__path__"):
        names += sorted(m.name for m in pkgutil.walk_packages(module.__path__, top + "."))
    for name in names:
        if name.endswith("__main__"):
            continue
        try:
            importlib.import_module(name)
            imported.append(name)
        except ImportError as exc:
            failed.append(f"{name}: {exc}")
print(json.dumps({"imported": imported, "failed": failed}))
"""


def import_layer(blocked: list[str], wanted: list[str]) -> dict[str, list[str]]:
    """Import ``wanted`` (with their submodules) in a new interpreter that refuses
    ``blocked``; what was imported and what failed."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_LAYER, json.dumps(blocked), json.dumps(wanted)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("index", range(len(LAYERS)), ids=[name for name, _ in LAYERS])
def test_each_layer_imports_with_the_higher_layers_blocked(index: int) -> None:
    _, wanted = LAYERS[index]
    result = import_layer(higher_than(index), list(wanted))
    assert result["failed"] == []
    assert len(result["imported"]) >= len(wanted)


def imports_in(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``core``/``desktop`` import in a file, inside functions too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)]
            # ``from core import x`` imports the module core.x, when there is one
            found += [
                (node.lineno, f"{node.module}.{a.name}")
                for a in node.names
                if is_module(f"{node.module}.{a.name}")
            ]
    # the bare packages (their __init__, a version string) belong to no layer
    return [
        (line, name)
        for line, name in found
        if name.split(".")[0] in ("core", "desktop") and name not in ("core", "desktop")
    ]


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def test_no_import_anywhere_in_a_layer_reaches_up() -> None:
    """The lazy imports too (inside functions), which the import test cannot see."""
    wrong = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        own = layer_of(module)
        if own == len(LAYERS):
            continue
        for line, name in imports_in(path):
            if name.split(".")[0] == "desktop" or layer_of(name) > own:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert wrong == []


def test_the_blocker_and_the_source_check_catch_an_import_upwards(tmp_path: Path) -> None:
    """Both checks fail on the bug they guard: a lower module importing a higher one."""
    bad = tmp_path / "bad.py"
    bad.write_text("from core.agent.types import Usage\n\n\ndef f():\n    import core.app\n")
    assert [name for _, name in imports_in(bad)] == ["core.agent.types", "core.app"]
    assert layer_of("core.agent.types") > layer_of("core.store.bad")
    assert layer_of("core.app") > layer_of("core.store.bad")
    # core.books.importer imports core.store: with the store blocked, its import fails
    result = import_layer(["core.store"], ["core.books.importer"])
    assert len(result["failed"]) == 1 and "core.store" in result["failed"][0]

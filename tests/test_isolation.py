"""The suite's own guards: no network, no real user folders, no real keyring."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from core.paths import resolve_paths


def test_data_folder_is_a_temp_folder(margin_home: Path) -> None:
    paths = resolve_paths()
    assert paths.data == margin_home.resolve()
    assert Path.home() not in paths.data.parents or "margin-home" in str(paths.data)


def test_network_is_refused() -> None:
    with socket.socket() as s, pytest.raises(OSError, match="network"):
        s.connect(("192.0.2.1", 80))


def test_keyring_is_in_memory() -> None:
    import keyring

    keyring.set_password("margin-test", "user", "secret")
    assert type(keyring.get_keyring()).__name__ == "MemoryKeyring"
    assert keyring.get_password("margin-test", "user") == "secret"


CORE_CHECK = """
import importlib, pkgutil, sys
import core
names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))
for name in names:
    if name.endswith("__main__"):
        continue
    importlib.import_module(name)
bad = sorted(
    n for n in sys.modules
    if n.split(".")[0] in ("desktop", "PySide6", "shiboken6", "qasync", "anthropic")
)
print(len(names))
print(" ".join(bad))
"""


def test_core_never_imports_the_window_qt_or_the_sdk() -> None:
    """Every core module imported in a fresh interpreter: no desktop, no Qt, no qasync, and
    not the anthropic SDK either (it loads only when a model is first called)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", CORE_CHECK],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    count, bad = [*done.stdout.splitlines(), "", ""][:2]
    assert int(count) > 40, "every core module was imported"
    assert bad == "", f"core pulled in: {bad}"

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


def test_core_imports_no_qt() -> None:
    root = Path(__file__).resolve().parent.parent / "core"
    offenders = []
    for py in root.rglob("*.py"):
        for line in py.read_text(encoding="utf-8").splitlines():
            stripped = line.strip()
            if stripped.startswith(("import ", "from ")) and any(
                name in stripped.split()[1] for name in ("PySide6", "qasync", "shiboken", "PyQt")
            ):
                offenders.append(f"{py}: {stripped}")
    assert offenders == []

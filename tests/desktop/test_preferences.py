"""desktop/window/preferences.py: the window's app-wide preferences, read and written in one place."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from core.paths import resolve_paths
from desktop.window.preferences import Preferences, WindowState


def test_window_state_round_trip(margin_home: Any, qapp: Any) -> None:
    paths = resolve_paths()
    paths.ensure()
    prefs = Preferences(paths)
    assert prefs.window() == WindowState(), "nothing saved yet: the defaults"
    assert not prefs.welcomed()
    state = WindowState(
        geometry=QByteArray(b"g"),
        reading_splitter=QByteArray(b"r"),
        side_splitter=QByteArray(b"s"),
        view="library",
        side=True,
        chat=False,
        focus=True,
        full_screen=True,
        theme="sepia",
        book=7,
    )
    prefs.save_window(state)
    prefs.set_welcomed()
    again = Preferences(paths)
    assert again.window() == state
    assert again.theme() == "sepia" and again.welcomed()


def test_bad_values_fall_back_to_the_defaults(margin_home: Any, qapp: Any) -> None:
    paths = resolve_paths()
    paths.ensure()
    ini = QSettings(str(paths.config / "window.ini"), QSettings.Format.IniFormat)
    for key, value in {
        "theme": "neon",
        "book": "x",
        "view": "?",
        "chat": "no",
        "geometry": 3,
    }.items():
        ini.setValue(key, value)
    ini.sync()
    state = Preferences(paths).window()
    assert (state.theme, state.book, state.view, state.chat, state.geometry) == (
        "system",
        None,
        "reader",
        False,
        None,
    )

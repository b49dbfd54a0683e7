"""The window's app-wide preferences, read and written here only: its geometry and splitters,
the view (library or book), the side panel and chat shown, focus mode and full screen, the
colour theme, the last open book, and whether the welcome guide was offered. Kept in
``window.ini`` in the config folder. (The model settings are ``core.settings``; per-book view
state lives with the book in the library database.)"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QSettings

from core.paths import Paths

THEMES = ("system", "light", "sepia", "dark", "contrast")


def _bool(value: object, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes")


def _bytes(value: object) -> QByteArray | None:
    return value if isinstance(value, QByteArray) else None


@dataclass
class WindowState:
    geometry: QByteArray | None = None
    reading_splitter: QByteArray | None = None
    side_splitter: QByteArray | None = None
    view: str = "reader"  # or "library"
    side: bool = False
    chat: bool = True
    focus: bool = False
    full_screen: bool = False
    theme: str = "system"
    book: int | None = None


class Preferences:
    def __init__(self, paths: Paths) -> None:
        self._ini = QSettings(str(paths.config / "window.ini"), QSettings.Format.IniFormat)

    def theme(self) -> str:
        value = self._ini.value("theme")
        return value if isinstance(value, str) and value in THEMES else "system"

    def window(self) -> WindowState:
        ini = self._ini
        book = ini.value("book")
        try:
            book_id = int(str(book)) if book else None
        except ValueError:
            book_id = None
        return WindowState(
            geometry=_bytes(ini.value("geometry")),
            reading_splitter=_bytes(ini.value("reading_splitter")),
            side_splitter=_bytes(ini.value("side_splitter")),
            view="library" if ini.value("view") == "library" else "reader",
            side=_bool(ini.value("side"), False),
            chat=_bool(ini.value("chat"), True),
            focus=_bool(ini.value("focus"), False),
            full_screen=_bool(ini.value("full_screen"), False),
            theme=self.theme(),
            book=book_id,
        )

    def save_window(self, state: WindowState) -> None:
        ini = self._ini
        for name in ("geometry", "reading_splitter", "side_splitter"):
            value = getattr(state, name)
            if value is not None:
                ini.setValue(name, value)
        ini.setValue("view", state.view)
        ini.setValue("side", state.side)
        ini.setValue("chat", state.chat)
        ini.setValue("focus", state.focus)
        ini.setValue("full_screen", state.full_screen)
        ini.setValue("theme", state.theme)
        ini.setValue("book", state.book if state.book is not None else "")
        ini.sync()

    def whole_answers(self) -> bool:
        """Whether a finished answer is announced whole (else "Answer ready:" and its first
        sentence)."""
        return _bool(self._ini.value("announce_whole_answers"), False)

    def set_whole_answers(self, on: bool) -> None:
        self._ini.setValue("announce_whole_answers", int(on))
        self._ini.sync()

    def library_sort(self) -> str:
        """How the library was last sorted ("recent", "title" or "author")."""
        value = self._ini.value("library_sort")
        return value if value in ("recent", "title", "author") else "recent"

    def set_library_sort(self, key: str) -> None:
        self._ini.setValue("library_sort", key)
        self._ini.sync()

    def welcomed(self) -> bool:
        """Whether the welcome guide was imported once (never again, even if removed)."""
        return _bool(self._ini.value("welcomed"), False)

    def set_welcomed(self) -> None:
        self._ini.setValue("welcomed", 1)
        self._ini.sync()

"""A vertically written book says once, on screen, that it is shown in horizontal lines and
why (issue 45, item 3)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from core.books.importer import import_book
from core.books.progression import VERTICAL_NOTICE, vertical_writing
from core.paths import resolve_paths
from core.store.library import Library
from desktop.reader.vertical_notice import vertical_notice
from tests.core.books.epubgen import make_epub

KOKORO = "私はその人を常に先生と呼んでいた。だからここでもただ先生と書くだけで本名は打ち明けない。"
CSS = "html { -epub-writing-mode: vertical-rl; writing-mode: vertical-rl; }"


def book(path: Path, css: str) -> Path:
    return make_epub(
        path,
        [("一", f'<link rel="stylesheet" href="style.css"/><p>{KOKORO}</p>')],
        title="こころ",
        extra_files={"OEBPS/style.css": css},
    )


def test_vertical_writing_is_read_from_the_style_sheets(tmp_path: Path) -> None:
    assert vertical_writing(book(tmp_path / "v.epub", CSS), "epub")
    assert not vertical_writing(book(tmp_path / "h.epub", "p { margin: 0 }"), "epub")
    assert not vertical_writing(tmp_path / "missing.epub", "epub")
    assert not vertical_writing(None, "txt")


def test_the_notice_is_said_once_per_book(tmp_path: Path) -> None:
    lib = Library.open(resolve_paths(tmp_path / "home"))
    try:
        vertical = import_book(lib, book(tmp_path / "v.epub", CSS)).book
        plain = import_book(lib, book(tmp_path / "h.epub", "p { margin: 0 }")).book
        ini = QSettings(str(tmp_path / "reader.ini"), QSettings.Format.IniFormat)
        assert vertical_notice(ini, vertical) == VERTICAL_NOTICE
        assert "horizontal" in VERTICAL_NOTICE and "vertically" in VERTICAL_NOTICE
        assert vertical_notice(ini, vertical) == "", "said once"
        assert vertical_notice(ini, plain) == ""
    finally:
        lib.close()

"""A book's embedded fonts in the reader (issue 29, item 4): loaded once per book file into
Qt's font database (de-obfuscated by ``core.books.epubfonts``), and mapped to the names the
page HTML uses (``margin-book FAMILY``) only while "Keep the book's own styles" is on. A
font that does not load (damaged, or obfuscated for another book) is simply not used."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QByteArray
from PySide6.QtGui import QFont, QFontDatabase

from core.books.epubfonts import book_font_faces, read_fonts
from core.books.htmlbuilder import ALIAS
from core.errors import MarginError

if TYPE_CHECKING:
    from desktop.reader.typography import Typography

log = logging.getLogger(__name__)
_LOADED: dict[Path, dict[str, str]] = {}  # book file → CSS family → loaded family


def book_fonts(book_file: Path) -> dict[str, str]:
    """CSS family → the family Qt loaded for it (once per book file)."""
    if book_file not in _LOADED:
        mapping: dict[str, str] = {}
        try:
            fonts = read_fonts(book_file, book_font_faces(book_file))
        except MarginError as exc:
            log.info("book fonts not loaded: %s", exc.message)
            fonts = []
        for family, data in fonts:
            font_id = QFontDatabase.addApplicationFontFromData(QByteArray(data))
            families = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
            if families:
                mapping[family] = families[0]
            else:
                log.info("an embedded font of %s does not load", book_file.name)
        _LOADED[book_file] = mapping
    return _LOADED[book_file]


class FontedFlow(Protocol):
    """What the fonts need of the text flow: the book's file, its format and its look."""

    book_file: Path | None
    format: str

    @property
    def typography(self) -> Typography: ...


def apply_book_fonts(flow: FontedFlow) -> None:
    """Map the page's font names to the book's fonts, or unmap them (book styles off)."""
    if getattr(flow, "format", "") != "epub" or flow.book_file is None:
        return
    on = bool(getattr(flow.typography, "book_styles", True))
    if not on and flow.book_file not in _LOADED:
        return
    for css_family, loaded in book_fonts(flow.book_file).items():
        alias = ALIAS + css_family
        QFont.removeSubstitutions(alias)
        if on:
            QFont.insertSubstitution(alias, loaded)

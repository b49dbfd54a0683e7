"""How a reflowable book is set: the font, the spacing, and a reading column of a comfortable
measure centred in the window.

The settings themselves (``ReaderSettings``) live in core/settings.py under ``[reader]`` in
settings.toml; a book may override them, kept in reader.ini next to its other per-book state.
The column is made by the document's root-frame margins, computed from the font's width of
ordinary text whenever the view's width or the look changes, so the page keeps the window's
full width (its scrollbar at the window's edge, clicks in the margins still select).

Two-page spreads are left out: QTextDocument lays text out in one column only (no CSS
columns), and faking a spread with two documents would break the continuous flow and the
offsets that highlights, search results and citations rely on.
"""

from __future__ import annotations

import dataclasses
import json
import logging

from PySide6.QtCore import QSettings
from PySide6.QtGui import QFont, QFontDatabase, QFontMetricsF, QTextDocument

from core.errors import MarginError
from core.paths import Paths
from core.settings import (
    ReaderSettings,
    load_reader_settings,
    parse_reader_settings,
    save_reader_settings,
)
from core.store.reading_state import ReadingStates

log = logging.getLogger("margin.reader")

Typography = ReaderSettings

SERIF_PREFERENCES = (
    "Literata",
    "Charis SIL",
    "Source Serif 4",
    "Source Serif Pro",
    "Noto Serif",
    "Georgia",
    "Cambria",
    "Palatino Linotype",
    "Book Antiqua",
    "Liberation Serif",
    "DejaVu Serif",
    "Times New Roman",
    "Serif",
)
# what the measure counts: ordinary running text (letters and spaces as they come in prose)
SAMPLE = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness; the reader turned the page and went on reading."
)
MIN_COLUMN_PX = 160


def installed_families() -> list[str]:
    return list(QFontDatabase.families())


def serif_family() -> str:
    """The first good book serif installed here (Qt's generic "Serif" at worst)."""
    families = set(installed_families())
    for name in SERIF_PREFERENCES:
        if name in families:
            return name
    font = QFont()
    font.setStyleHint(QFont.StyleHint.Serif)
    return font.defaultFamily()


def family_of(typography: Typography) -> str:
    """The family to use: the chosen one when it is installed, else the default serif."""
    chosen = typography.font_family
    if chosen and chosen in set(installed_families()):
        return chosen
    if chosen:
        log.info("font %r is not installed; using a serif instead", chosen)
    return serif_family()


def book_font(typography: Typography, base: QFont | None = None) -> QFont:
    font = QFont(base) if base is not None else QFont()
    font.setFamilies([family_of(typography)])
    font.setPointSizeF(float(typography.font_size))
    font.setStyleStrategy(QFont.StyleStrategy.PreferQuality)
    return font


def char_width(font: QFont) -> float:
    """The average width of a character of running text (spaces included) in ``font``."""
    return QFontMetricsF(font).horizontalAdvance(SAMPLE) / len(SAMPLE)


# lines of prose vary around their average length (narrow letters, where the breaks fall): a
# column this much narrower than ``measure`` average characters keeps the longest lines within
# the measure (measured on Alice at 13 pt: longest line 63 of 66, median 58)
LINE_SPREAD = 1.04


def column_width(typography: Typography, font: QFont) -> float:
    """The column's width for lines of at most ``measure`` characters of prose."""
    return typography.measure * char_width(font) / LINE_SPREAD


def side_margin(typography: Typography, font: QFont, width: int) -> int:
    """Left and right margin that centres a column of ``measure`` characters in ``width``
    pixels, never less than ``typography.margin`` (the column gets narrower instead), and
    leaving at least a usable column on a very narrow window."""
    free = (width - column_width(typography, font)) / 2
    margin = max(float(typography.margin), free)
    margin = min(margin, max(0.0, (width - MIN_COLUMN_PX) / 2))
    return max(0, int(margin))


def line_lengths(document: QTextDocument, start: int = 0, end: int = -1) -> list[int]:
    """Characters on each full line as laid out (a paragraph's last line, usually short, left
    out; trailing spaces not counted) in the blocks between two document positions."""
    lengths: list[int] = []
    block = document.findBlock(start)
    while block.isValid() and (end < 0 or block.position() <= end):
        layout = block.layout()
        text = block.text()
        if layout is not None:
            for i in range(layout.lineCount() - 1):
                line = layout.lineAt(i)
                piece = text[line.textStart() : line.textStart() + line.textLength()]
                if piece.strip():
                    lengths.append(len(piece.rstrip()))
        block = block.next()
    return lengths


# remembered: globally in settings.toml, per book in reader.ini --------------------------------


class TypographyStore:
    """The look of books: one global (settings.toml), plus optional overrides for single
    books, kept with the book in the library (``ReadingStates``; the reader's ``reader.ini``
    carries them there as ``reading_states`` when no ``states`` are given)."""

    def __init__(
        self, paths: Paths, reader_ini: QSettings, states: ReadingStates | None = None
    ) -> None:
        self.paths = paths
        self.ini = reader_ini
        self.states: ReadingStates | None = states or getattr(reader_ini, "reading_states", None)
        self.global_, self.problems = load_reader_settings(paths)
        if not self.ini.value("typography/migrated"):  # once: the size zoomed to before
            self.ini.setValue("typography/migrated", 1)  # [reader] existed
            zoom = str(self.ini.value("font_size") or "")
            if self.global_.font_size == Typography().font_size and zoom.isdigit():
                self.global_ = dataclasses.replace(self.global_, font_size=int(zoom))
                try:
                    save_reader_settings(paths, self.global_)
                except MarginError as exc:
                    log.warning("%s", exc)
        for problem in self.problems:
            log.warning("%s", problem)

    def _key(self, book_id: int) -> str:
        return f"book/{book_id}/typography"

    def _override(self, book_id: int) -> object:
        if self.states is not None:
            return self.states.get(book_id).view.get("typography")
        raw = self.ini.value(self._key(book_id), "")
        try:
            return json.loads(str(raw)) if raw else None
        except ValueError:
            return {}

    def has_override(self, book_id: int | None) -> bool:
        return bool(book_id) and self._override(int(book_id or 0)) is not None

    def for_book(self, book_id: int | None) -> Typography:
        if not book_id:
            return self.global_
        data = self._override(book_id)
        if data is None:
            return self.global_
        settings, problems = parse_reader_settings(data, f"the settings of book {book_id}")
        for problem in problems:
            log.warning("%s", problem)
        return settings

    def save(self, typography: Typography, book_id: int | None = None) -> None:
        """Remember ``typography`` for one book (``book_id``) or for every book."""
        if book_id:
            look = dataclasses.asdict(typography)
            if self.states is not None:
                view = {**self.states.get(book_id).view, "typography": look}
                self.states.update(book_id, view=view)
            else:
                self.ini.setValue(self._key(book_id), json.dumps(look))
            return
        self.global_ = typography
        save_reader_settings(self.paths, typography)

    def forget_book(self, book_id: int) -> None:
        if self.states is not None:
            view = dict(self.states.get(book_id).view)
            view.pop("typography", None)
            self.states.update(book_id, view=view)
        else:
            self.ini.remove(self._key(book_id))

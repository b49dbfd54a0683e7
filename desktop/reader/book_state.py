"""What the reader remembers: per book in the library database (``ReadingStates``: the first
line on screen, the PDF zoom, the side panel, the book's own look), and the reader's own
habits in ``reader.ini`` (the measured reading pace). The font size lives in ``settings.toml``
with the rest of the look (``desktop.reader.typography``); an older ``font_size`` in
``reader.ini`` is read there once and never written again.

Older versions kept the per-book part in ``reader.ini`` under ``book/N/…``, where it outlived
the book and passed to the next book given the same id: it moves to the database once."""

from __future__ import annotations

import json
import logging

from PySide6.QtCore import QSettings

from core.store.library import Library
from core.store.reading_state import ReadingStates, ViewState

log = logging.getLogger("margin.reader")


class ReaderMemory:
    def __init__(self, library: Library) -> None:
        self.library = library
        self.states = ReadingStates(library.db)
        self.ini = QSettings(str(library.paths.config / "reader.ini"), QSettings.Format.IniFormat)
        self._move_books_from_ini()

    # the reader's habits ----------------------------------------------------------------

    def seconds_per_page(self) -> float:
        return _float(self.ini.value("seconds_per_page"), 0.0)

    def set_seconds_per_page(self, seconds: float) -> None:
        self.ini.setValue("seconds_per_page", round(seconds, 1))

    # per book ---------------------------------------------------------------------------

    def book(self, book_id: int) -> ViewState:
        return self.states.get(book_id)

    def remember(self, book_id: int, **changes: object) -> None:
        try:
            self.states.update(book_id, **changes)
        except Exception:  # the library busy or full: the place is a comfort, not data
            log.warning("the reading state of book %s was not saved", book_id, exc_info=True)

    def _move_books_from_ini(self) -> None:
        self.ini.beginGroup("book")
        ids = [key for key in self.ini.childGroups() if key.isdigit()]
        self.ini.endGroup()
        if not ids:
            return
        known = {b.id for b in self.library.list_books()}
        for key in ids:
            book_id = int(key)
            if book_id not in known:
                continue  # a deleted book's leftovers: dropped
            changes: dict[str, object] = {}
            where, _, within = str(self.ini.value(f"book/{key}/place", "")).partition(":")
            if where.isdigit() and within.isdigit():
                changes["place"] = (int(where), int(within))
            zoom = self.ini.value(f"book/{key}/zoom")
            if zoom not in (None, "", "fit"):
                changes["zoom"] = _float(zoom, 1.3)
            raw = self.ini.value(f"book/{key}/typography", "")
            if raw:
                try:
                    look = json.loads(str(raw))
                except ValueError:
                    look = None
                if isinstance(look, dict):
                    changes["view"] = {"typography": look}
            if changes:
                self.states.update(book_id, **changes)
        self.ini.remove("book")
        self.ini.sync()
        log.info("moved the reading state of %d books from reader.ini to the library", len(ids))


def _float(value: object, default: float) -> float:
    try:
        return float(str(value))
    except (TypeError, ValueError):
        return default

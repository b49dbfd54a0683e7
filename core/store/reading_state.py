"""A book's reading state, kept with the book in the library (table ``reading_state``, one
row per book, deleted with it): where the screen was (the first line on screen, so the book
reopens at the same words whatever the window's size), the PDF zoom, the side panel shown,
and per-book view settings (a typography override). The page on screen and how far the
reader has read are the book's own columns (``Book.page``, ``Book.read_to``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import peewee as pw

from core.store import models as m


@dataclass(frozen=True)
class ViewState:
    place: tuple[int, int] | None = None  # (page, offset) of the first line on screen
    zoom: float | None = None  # a PDF's scale; None: fit the width
    side: str = ""  # the side panel shown ("Contents", "Find", …)
    view: dict[str, Any] = field(default_factory=dict)  # per-book view settings

    @classmethod
    def from_json(cls, raw: str | None) -> ViewState:
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        place = data.get("place")
        zoom = data.get("zoom")
        view = data.get("view")
        spot = None
        if isinstance(place, list) and len(place) == 2 and all(isinstance(v, int) for v in place):
            spot = (int(place[0]), int(place[1]))
        return cls(
            place=spot,
            zoom=float(zoom) if isinstance(zoom, int | float) and 0.1 <= zoom <= 10 else None,
            side=str(data.get("side") or ""),
            view=view if isinstance(view, dict) else {},
        )

    def to_json(self) -> str:
        data = asdict(self)
        data["place"] = list(self.place) if self.place else None
        return json.dumps(data, ensure_ascii=False)


class ReadingStates:
    """Reads and writes ``ViewState`` rows (and the page facts the reader needs)."""

    def __init__(self, db: pw.SqliteDatabase) -> None:
        self.db = db

    def get(self, book_id: int) -> ViewState:
        row = self.db.execute_sql(
            "SELECT data FROM reading_state WHERE book_id = ?", (book_id,)
        ).fetchone()
        return ViewState.from_json(row[0] if row else None)

    def update(self, book_id: int, **changes: Any) -> ViewState:
        """Change some fields of a book's state (the others are kept); a book that is gone
        keeps nothing."""
        with self.db.atomic():
            state = replace(self.get(book_id), **changes)
            if m.Book.get_or_none(m.Book.id == book_id) is None:
                return state
            self.db.execute_sql(
                "INSERT INTO reading_state (book_id, data, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (book_id) DO UPDATE SET data = excluded.data, "
                "updated_at = excluded.updated_at",
                (book_id, state.to_json(), m.utcnow().isoformat()),
            )
        return state

    def forget(self, book_id: int) -> None:
        self.db.execute_sql("DELETE FROM reading_state WHERE book_id = ?", (book_id,))

    def page_chapters(self, book_id: int) -> list[int]:
        """The chapter index of each stored page, in order (for "time left in chapter" and
        Home/End)."""
        rows = self.db.execute_sql(
            "SELECT chapter FROM page WHERE book_id = ? ORDER BY number", (book_id,)
        ).fetchall()
        return [int(row[0]) for row in rows]

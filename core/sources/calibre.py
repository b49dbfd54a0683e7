"""A calibre library, read-only: its ``metadata.db`` (titles, authors, series, tags,
formats, covers) and its viewer's highlights (the ``annotations`` table).

The database is opened with SQLite's ``mode=ro`` and a short busy timeout, never written
(changing a calibre library is ``calibredb``'s job). calibre writing at the same moment
shows as "busy" in words; a library that was moved shows as "moved".
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from core.sync.errors import SyncError

BUSY_TIMEOUT_S = 2.0
# formats Margin reads, best first (calibre keeps one file per format)
FORMATS = ("EPUB", "PDF", "TXT", "MD", "MARKDOWN", "HTML", "HTM", "TXTZ", "KEPUB", "CBZ")


@dataclass(frozen=True)
class CalibreBook:
    id: int
    title: str
    authors: tuple[str, ...]
    series: str
    series_index: float
    tags: tuple[str, ...]
    formats: dict[str, Path] = field(default_factory=dict)
    cover: Path | None = None
    modified: str = ""
    uuid: str = ""

    def best_file(self) -> Path | None:
        for fmt in FORMATS:
            if fmt in self.formats:
                return self.formats[fmt]
        return None


@dataclass(frozen=True)
class CalibreHighlight:
    """A highlight calibre's viewer saved (``annot_type`` "highlight")."""

    book: int
    format: str
    uuid: str
    text: str
    notes: str
    spine_index: int
    colour: str
    timestamp: str


class CalibreLibrary:
    def __init__(self, folder: Path | str, *, timeout: float = BUSY_TIMEOUT_S) -> None:
        self.folder = Path(folder).expanduser()
        self.timeout = timeout

    @property
    def database(self) -> Path:
        return self.folder / "metadata.db"

    def stamp(self) -> str:
        """Changes whenever calibre changes the library (the database or its journal)."""
        parts = []
        for name in ("metadata.db", "metadata.db-wal"):
            try:
                st = (self.folder / name).stat()
                parts.append(f"{st.st_mtime_ns}:{st.st_size}")
            except OSError:
                parts.append("-")
        return "/".join(parts)

    def _connect(self) -> sqlite3.Connection:
        if not self.database.is_file():
            raise SyncError(
                "moved",
                f"There is no calibre library at {self.folder} (its metadata.db is missing); "
                "it may have been moved or renamed.",
                hint="Add it again from its new place (margin library add-calibre DIR).",
            )
        uri = f"file:{quote(str(self.database.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout)
            conn.execute("SELECT 1 FROM books LIMIT 1")
        except sqlite3.OperationalError as exc:
            raise _explain(exc, self.folder) from None
        except sqlite3.DatabaseError:
            raise SyncError(
                "bad_library",
                f"{self.database} is not a calibre library database Margin can read.",
                hint="Open the library in calibre once (it repairs it), then try again.",
            ) from None
        return conn

    def books(self) -> list[CalibreBook]:
        """Every book of the library with its metadata (one pass per table)."""
        conn = self._connect()
        try:
            return self._books(conn)
        except sqlite3.OperationalError as exc:
            raise _explain(exc, self.folder) from None
        finally:
            conn.close()

    def _books(self, conn: sqlite3.Connection) -> list[CalibreBook]:
        authors: dict[int, list[str]] = {}
        for book, name in conn.execute(
            "SELECT l.book, a.name FROM books_authors_link l JOIN authors a ON a.id = l.author "
            "ORDER BY l.id"
        ):
            authors.setdefault(book, []).append(name.replace("|", ","))
        series = dict(
            conn.execute(
                "SELECT l.book, s.name FROM books_series_link l JOIN series s ON s.id = l.series"
            ).fetchall()
        )
        tags: dict[int, list[str]] = {}
        for book, name in conn.execute(
            "SELECT l.book, t.name FROM books_tags_link l JOIN tags t ON t.id = l.tag "
            "ORDER BY t.name"
        ):
            tags.setdefault(book, []).append(name)
        formats: dict[int, dict[str, str]] = {}
        for book, fmt, name in conn.execute("SELECT book, format, name FROM data"):
            formats.setdefault(book, {})[fmt.upper()] = f"{name}.{fmt.lower()}"
        found = []
        for bid, title, path, has_cover, index, modified, uid in conn.execute(
            "SELECT id, title, path, has_cover, series_index, last_modified, uuid FROM books "
            "ORDER BY id"
        ):
            folder = self.folder / path
            found.append(
                CalibreBook(
                    id=bid,
                    title=title,
                    authors=tuple(authors.get(bid, ())),
                    series=series.get(bid, ""),
                    series_index=float(index or 0),
                    tags=tuple(tags.get(bid, ())),
                    formats={f: folder / n for f, n in formats.get(bid, {}).items()},
                    cover=folder / "cover.jpg" if has_cover else None,
                    modified=str(modified or ""),
                    uuid=str(uid or ""),
                )
            )
        return found

    def highlights(self, book: int | None = None) -> list[CalibreHighlight]:
        """The viewer's highlights (of ``book``, or all), oldest first; removed ones (calibre
        keeps them as ``"removed": true``) are left out."""
        conn = self._connect()
        try:
            sql = (
                "SELECT book, format, annot_id, annot_data, timestamp FROM annotations "
                "WHERE annot_type = 'highlight'"
            )
            rows = conn.execute(
                sql + (" AND book = ?" if book is not None else "") + " ORDER BY timestamp",
                (book,) if book is not None else (),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise _explain(exc, self.folder) from None
        finally:
            conn.close()
        found = []
        for bid, fmt, annot_id, data, stamp in rows:
            try:
                annot = json.loads(data)
            except (TypeError, ValueError):
                continue
            if not isinstance(annot, dict) or annot.get("removed"):
                continue
            text = str(annot.get("highlighted_text") or "").strip()
            if not text:
                continue
            style = annot.get("style") if isinstance(annot.get("style"), dict) else {}
            found.append(
                CalibreHighlight(
                    book=bid,
                    format=str(fmt).upper(),
                    uuid=str(annot.get("uuid") or annot_id),
                    text=text,
                    notes=str(annot.get("notes") or ""),
                    spine_index=int(annot.get("spine_index") or 0),
                    colour=str((style or {}).get("which") or "yellow"),
                    timestamp=str(annot.get("timestamp") or stamp),
                )
            )
        return found


def _explain(exc: sqlite3.OperationalError, folder: Path) -> SyncError:
    text = str(exc).lower()
    if "locked" in text or "busy" in text:
        return SyncError(
            "busy",
            f"calibre is changing the library at {folder} right now.",
            hint="Try again in a moment; nothing was changed.",
        )
    if "no such table" in text:
        return SyncError(
            "bad_library",
            f"{folder} does not hold a calibre library Margin can read ({exc}).",
        )
    return SyncError(
        "unreadable", f"Margin could not read the calibre library at {folder} ({exc})."
    )

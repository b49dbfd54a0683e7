"""A calibre library's books in Margin: imported in place (Margin reads calibre's own file;
no copy), with calibre's titles, authors, series, tags and covers, refreshed when calibre
changes the library, and its viewer's highlights imported on request.

The libraries are listed in ``[calibre] libraries`` of settings.toml; what Margin knows of
each book is in ``source_book`` (calibre's id, series, tags, cover, change stamp)."""

from __future__ import annotations

import json
import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import MarginError
from core.paths import Paths
from core.progress import ProgressCallback, no_progress
from core.sources.calibre import CalibreBook, CalibreLibrary
from core.store.anchors import BookText, TextQuote
from core.store.library import Library
from core.sync import config

log = logging.getLogger("margin.sources.calibre")

TABLE = "calibre"
COLOURS = {
    "yellow": "yellow",
    "green": "green",
    "blue": "blue",
    "red": "pink",
    "pink": "pink",
    "purple": "purple",
}


@dataclass
class RefreshReport:
    folder: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    gone: int = 0  # in Margin from this library, no longer in calibre (kept in Margin)
    skipped: list[str] = field(default_factory=list)  # no format Margin reads
    failed: list[str] = field(default_factory=list)  # "title: reason"


def libraries(paths: Paths) -> list[str]:
    found = config.table(paths, TABLE).get("libraries", [])
    return [str(f) for f in found] if isinstance(found, list) else []


def remember(paths: Paths, folder: Path) -> None:
    values = config.table(paths, TABLE)
    known = libraries(paths)
    if str(folder) not in known:
        values["libraries"] = [*known, str(folder)]
        config.save_table(paths, TABLE, values)


def _stamp_file(library: Library) -> Path:
    return library.paths.data / "calibre-stamps.json"


def _stamps(library: Library) -> dict[str, str]:
    try:
        data = json.loads(_stamp_file(library).read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_stamp(library: Library, folder: str, stamp: str) -> None:
    data = _stamps(library)
    data[folder] = stamp
    _stamp_file(library).write_text(json.dumps(data), encoding="utf-8")


def changed(library: Library, folder: Path | str) -> bool:
    """Whether calibre changed the library since Margin last read it (cheap: two stats)."""
    key = str(Path(folder).expanduser().resolve())
    return _stamps(library).get(key) != CalibreLibrary(key).stamp()


def refresh(
    library: Library,
    folder: Path | str,
    *,
    force: bool = False,
    progress: ProgressCallback = no_progress,
) -> RefreshReport:
    """Bring Margin's books from the calibre library at ``folder`` up to date."""
    cal = CalibreLibrary(Path(folder).expanduser().resolve())
    key = str(cal.folder)
    report = RefreshReport(key)
    stamp = cal.stamp()
    if not force and _stamps(library).get(key) == stamp:
        report.unchanged = library.db.execute_sql(
            "SELECT COUNT(*) FROM source_book WHERE source = ?", (key,)
        ).fetchone()[0]
        return report
    books = cal.books()
    known = {
        k: (bid, modified)
        for bid, k, modified in library.db.execute_sql(
            "SELECT book_id, key, modified FROM source_book WHERE source = ?", (key,)
        )
    }
    for n, cb in enumerate(books):
        progress(n / max(1, len(books)), f"Reading {cb.title}")
        if str(cb.id) in known:
            bid, modified = known.pop(str(cb.id))
            if modified == cb.modified:
                report.unchanged += 1
            else:
                _describe(library, bid, key, cb)
                report.updated += 1
            continue
        path = cb.best_file()
        if path is None or not path.is_file():
            report.skipped.append(cb.title)
            continue
        try:
            bid = _import_in_place(library, path)
        except MarginError as exc:
            report.failed.append(f"{cb.title}: {exc.message}")
            continue
        _describe(library, bid, key, cb)
        report.added += 1
    report.gone = len(known)
    _save_stamp(library, key, stamp)
    progress(1.0, "Ready")
    return report


def _import_in_place(library: Library, path: Path) -> int:
    """Read the book at ``path`` into Margin without copying it; its id."""
    from core.books.chunking import make_chunks
    from core.books.importer import file_sha256
    from core.books.parse import check_file, detect_format, parse_book
    from core.search.vector_indexer import request_vectors

    detect_format(path)
    check_file(path)
    sha = file_sha256(path)
    existing = library.book_by_sha256(sha)
    if existing is not None:
        return existing.id
    parsed = parse_book(path)
    book_id = library.add_book(
        parsed=parsed,
        chunks=make_chunks(parsed.pages),
        sha256=sha,
        original_path=str(path),
        file_path=str(path),  # outside the data folder: stored as is, never deleted by Margin
        file_size=path.stat().st_size,
        title=parsed.title.strip() or path.stem,
    )
    request_vectors(library.db)
    return book_id


def _describe(library: Library, book_id: int, source: str, cb: CalibreBook) -> None:
    """calibre's metadata on Margin's book, and its cover in Margin's cover cache."""
    db = library.db
    with db.atomic():
        db.execute_sql(
            "UPDATE book SET title = ?, author = ? WHERE id = ?",
            (cb.title, " & ".join(cb.authors), book_id),
        )
        db.execute_sql(
            "INSERT OR REPLACE INTO source_book (book_id, source, key, series, series_index, "
            "tags, cover, modified) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                book_id,
                source,
                str(cb.id),
                cb.series,
                cb.series_index,
                json.dumps(cb.tags),
                str(cb.cover or ""),
                cb.modified,
            ),
        )
    if cb.cover is not None and cb.cover.is_file():
        from core.books.covers import cover_file

        sha = library.get_book(book_id).sha256
        target = cover_file(library.paths.data, sha)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cb.cover, target)  # Qt reads the image by its content
        except OSError as exc:
            log.info("calibre cover of book %d not cached: %s", book_id, exc)


@dataclass(frozen=True)
class SourceInfo:
    source: str
    key: str
    series: str
    series_index: float
    tags: tuple[str, ...]
    cover: str


def source_of(library: Library, book_id: int) -> SourceInfo | None:
    row = library.db.execute_sql(
        "SELECT source, key, series, series_index, tags, cover FROM source_book WHERE book_id = ?",
        (book_id,),
    ).fetchone()
    if row is None:
        return None
    source, key, series, index, tags, cover = row
    return SourceInfo(source, key, series, float(index), tuple(json.loads(tags)), cover)


def import_highlights(library: Library, folder: Path | str) -> int:
    """calibre's viewer highlights of this library's books as Margin highlights (each once).
    Returns how many were added."""
    cal = CalibreLibrary(Path(folder).expanduser().resolve())
    mine = {
        int(k): bid
        for bid, k in library.db.execute_sql(
            "SELECT book_id, key FROM source_book WHERE source = ?", (str(cal.folder),)
        )
    }
    added = 0
    texts: dict[int, BookText] = {}
    for hl in cal.highlights():
        book_id = mine.get(hl.book)
        if book_id is None:
            continue
        if book_id not in texts:
            texts[book_id] = BookText(library.page_texts(book_id))
        text = texts[book_id]
        book = library.get_book(book_id)
        expected = int(len(text.text) * _spine_fraction(Path(book.file_path), hl.spine_index))
        found = text.find(TextQuote(hl.text), expected)
        if found is None:
            log.info("calibre highlight %s not found in book %d", hl.uuid, book_id)
            continue
        page = found.quote.page
        if any(
            h.text == found.quote.exact and h.page == page
            for h in library.list_highlights(book_id, page)
        ):
            continue
        library.add_highlight(
            book_id,
            page,
            found.quote.exact,
            note=hl.notes,
            colour=COLOURS.get(hl.colour, "yellow"),
        )
        added += 1
    return added


def _spine_fraction(path: Path, spine_index: int) -> float:
    """How far into the book calibre's spine item ``spine_index`` (0-based) starts."""
    if path.suffix.lower() != ".epub":
        return 0.0
    try:
        from core.sync.xpointer import positions_of

        positions = positions_of(path)
    except (MarginError, OSError, ValueError):
        return 0.0
    start = positions.fragment_start(spine_index + 1)
    if start is None:
        return 0.0
    return positions.fraction(start, 0)

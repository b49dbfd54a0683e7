"""The library's shelf (its ready books, as ``Library.list_books`` orders them) read with
``sqlite3`` alone, before the store's code is loaded: the window paints its first frame with
the books on it without peewee and the store's modules (~40 ms of CPU, a sixth of the
start-up). Only for a library whose schema is current (the window reads the version from
the file's header first); ``tests/core/store/test_shelf.py`` keeps it equal to
``Library.list_books``. Anything unexpected raises: the caller then opens the library the
usual way."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from core.store.book_info import BookInfo

_COLUMNS = (
    "id, title, author, language, format, sha256, original_path, file_path, file_size,"
    " page_count, position, read_to, finished, status, added_at, opened_at, parser_version"
)
_QUERY = (
    f"SELECT {_COLUMNS} FROM book WHERE status = 'ready'"
    " ORDER BY COALESCE(opened_at, added_at) DESC, id DESC"
)


def _when(value: object) -> dt.datetime:
    if not isinstance(value, str):
        raise ValueError(f"a date stored as {type(value).__name__}")
    return dt.datetime.fromisoformat(value)


def read_shelf(database: Path, data: Path) -> list[BookInfo]:
    """The ready books in ``database``, most recently opened (then added) first; a copy's
    path stored relative to the data folder made absolute under ``data``."""
    if not database.is_file():
        raise FileNotFoundError(database)
    # read only, by a URI written here (``Path.as_uri`` would load urllib and ipaddress,
    # ~3 ms); a Windows path becomes /C:/…, which SQLite reads as C:/…
    path = database.absolute().as_posix()
    path = path if path.startswith("/") else f"/{path}"
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    connection = sqlite3.connect(f"file:{escaped}?mode=ro", uri=True, timeout=1.0)
    try:
        rows = connection.execute(_QUERY).fetchall()
    finally:
        connection.close()
    books = []
    for row in rows:
        (id_, title, author, language, format_, sha256, original, file_path, size) = row[:9]
        (page_count, page, read_to, finished, status, added, opened, parser) = row[9:]
        if file_path and not Path(file_path).is_absolute():
            file_path = str(data / file_path)
        books.append(
            BookInfo(
                id=int(id_),
                title=str(title),
                author=str(author),
                language=str(language),
                format=str(format_),
                sha256=str(sha256),
                original_path=str(original),
                file_path=str(file_path),
                file_size=int(size),
                page_count=int(page_count),
                page=int(page),
                read_to=int(read_to),
                finished=bool(finished),
                status=str(status),
                added_at=_when(added),
                opened_at=None if opened is None else _when(opened),
                parser_version=int(parser),
            )
        )
    return books

"""The books themselves between computers (``[webdav] books = true``): each book file once
under ``FOLDER/books/SHA256.ext``; a computer that has notes waiting for a book it lacks
downloads it from there and imports it (the same bytes, so the same book)."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import peewee as pw

from core.errors import MarginError
from core.sync.webdav import WebDav

log = logging.getLogger("margin.sync.books")

MAX_BOOK = 1024 * 1024 * 1024


def send_books(db: pw.SqliteDatabase, dav: WebDav, folder: str, data_dir: Path) -> int:
    """Upload the books the folder does not have yet; returns how many."""
    remote = {name for name, is_dir in dav.list(f"{folder}/books") or [] if not is_dir}
    sent = 0
    for sha, file_path in db.execute_sql(
        "SELECT sha256, file_path FROM book WHERE status = 'ready' AND file_path != ''"
    ).fetchall():
        path = Path(file_path) if Path(file_path).is_absolute() else data_dir / file_path
        name = f"{sha}{path.suffix.lower()}"
        if name in remote or not path.is_file():
            continue
        if not remote and sent == 0:
            dav.mkdirs(f"{folder}/books")
        dav.put(f"{folder}/books/.{name}.part", path.read_bytes())
        dav.move(f"{folder}/books/.{name}.part", f"{folder}/books/{name}")
        sent += 1
    return sent


def fetch_books(
    db: pw.SqliteDatabase, dav: WebDav, folder: str, import_file: Callable[[Path], Any]
) -> tuple[int, list[str]]:
    """Download and import the books that records here wait for. Returns (how many,
    problems in words)."""
    wanted = {
        sha
        for (sha,) in db.execute_sql(
            "SELECT DISTINCT book FROM sync_record WHERE applied = 0 AND deleted = 0"
        )
        if sha
    }
    have = {sha for (sha,) in db.execute_sql("SELECT sha256 FROM book WHERE status = 'ready'")}
    dropped = {
        name.removeprefix("dropped:")
        for (name,) in db.execute_sql("SELECT name FROM sync_seen WHERE name LIKE 'dropped:%'")
    }
    wanted -= have | dropped
    if not wanted:
        return 0, []
    listing = dav.list(f"{folder}/books") or []
    got, problems = 0, []
    for name, is_dir in listing:
        sha, _, suffix = name.partition(".")
        if is_dir or sha not in wanted or name.startswith("."):
            continue
        data = dav.get(f"{folder}/books/{name}", max_body=MAX_BOOK)
        if data is None:
            continue
        with tempfile.TemporaryDirectory(prefix="margin-sync-") as tmp:
            path = Path(tmp) / f"book.{suffix}"
            path.write_bytes(data)
            try:
                import_file(path)
                got += 1
            except MarginError as exc:
                log.info("synced book %s not imported: %s", name, exc.message)
                problems.append(f"A book from another computer could not be read: {exc}")
    return got, problems

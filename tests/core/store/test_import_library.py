"""``margin import`` writes through the standard sqlite3 module (core/store/import_library.py):
the same rows as the whole library, a new library safe when the process dies in its first
import, and the whole library wherever this one cannot open it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.books.importer import import_book
from core.paths import Paths, resolve_paths
from core.store import import_library
from core.store.frozen import new_library
from core.store.import_library import open_for_import
from core.store.library import Library

ROOT = Path(__file__).resolve().parents[3]
_TIMES = {"added_at", "updated_at"}


def _rows(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored table's rows (the search index's own too), times left out."""
    db = sqlite3.connect(database)
    try:
        names = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        ).fetchall()
        out = {}
        for (name,) in names:
            cursor = db.execute(f'SELECT * FROM "{name}"')
            keep = [i for i, d in enumerate(cursor.description) if d[0] not in _TIMES]
            out[name] = sorted((tuple(r[i] for i in keep) for r in cursor), key=repr)
        return out
    finally:
        db.close()


def _journal_mode(database: Path) -> str:
    db = sqlite3.connect(database)
    try:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        db.close()


def _paths(folder: Path) -> Paths:
    return resolve_paths(str(folder))


def test_it_stores_what_the_whole_library_stores(tmp_path: Path, books_dir: Path) -> None:
    book = books_dir / "metamorphosis.txt"
    whole = Library.open(_paths(tmp_path / "whole"))
    try:
        import_book(whole, book, trim_memory=False)
    finally:
        whole.close()
    paths = _paths(tmp_path / "light")
    light = open_for_import(paths)
    assert light is not None
    try:
        result = import_book(light, book, trim_memory=False)
        again = import_book(light, book, trim_memory=False)
    finally:
        light.close()
    assert again.already_present and again.book == result.book
    assert _rows(paths.database) == _rows(_paths(tmp_path / "whole").database)
    assert _journal_mode(paths.database) == "wal"  # (written with a rollback journal)
    reopened = Library.open(paths)
    try:
        assert reopened.get_book(result.book.id) == result.book  # the times read alike too
    finally:
        reopened.close()


def test_a_library_with_books_is_written_through_its_wal(tmp_path: Path, books_dir: Path) -> None:
    paths = _paths(tmp_path / "home")
    library = Library.open(paths)
    try:
        first = import_book(library, books_dir / "metamorphosis.txt", trim_memory=False).book
    finally:
        library.close()
    light = open_for_import(paths)
    assert light is not None
    try:
        assert light.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert light.book_by_sha256(first.sha256) == first
        second = import_book(light, books_dir / "alice_in_wonderland.txt", trim_memory=False)
    finally:
        light.close()
    library = Library.open(paths)
    try:
        assert [b.id for b in library.list_books()] == [second.book.id, first.id]
        assert library.get_book(second.book.id) == second.book
    finally:
        library.close()


def _at_version(paths: Paths, version: int) -> None:
    Library.open(paths).close()
    db = sqlite3.connect(paths.database)
    db.execute(f"PRAGMA user_version = {version}")
    db.close()


def test_the_whole_library_opens_what_this_cannot(
    tmp_path: Path, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = _paths(tmp_path / "older")
    _at_version(older, new_library.VERSION - 1)
    assert open_for_import(older) is None  # the whole library updates it

    half = _paths(tmp_path / "half")
    Library.open(half).close()
    db = sqlite3.connect(half.database)
    db.execute(
        "INSERT INTO book (title, author, language, format, sha256, original_path, file_path,"
        " file_size, page_count, position, read_to, finished, status, added_at, updated_at)"
        " VALUES ('t', '', '', 'txt', 'x', '', '', 0, 1, 1, 1, 0, 'importing', '', '')"
    )
    db.commit()
    db.close()
    assert open_for_import(half) is None  # the whole library removes the unfinished book

    ready = _paths(tmp_path / "ready")
    _at_version(ready, new_library.VERSION)
    opened = open_for_import(ready)
    assert opened is not None
    opened.close()
    monkeypatch.setattr(import_library.os, "access", lambda path, mode: False)
    assert open_for_import(ready) is None  # a folder it cannot write: opened to read
    monkeypatch.undo()

    monkeypatch.setattr(new_library, "VERSION", new_library.VERSION - 1)
    fresh = _paths(tmp_path / "fresh")
    assert open_for_import(fresh) is None  # steps after the frozen schema: the migrations
    assert not fresh.database.exists()


def test_margin_import_loads_no_peewee(tmp_path: Path, books_dir: Path) -> None:
    script = (
        "import sys\nfrom core.cli import main\n"
        f"code = main(['--data-dir', {str(tmp_path)!r}, 'import', sys.argv[1]])\n"
        "print(code, 'peewee' in sys.modules, 'core.store.models' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(books_dir / "metamorphosis.txt")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines()[-1] == "0 False False", done.stderr
    assert "Metamorphosis" in done.stdout
    assert _journal_mode(tmp_path / "library.sqlite3") == "wal"


KILLED = """
import os, sys
from pathlib import Path
from core.books.chunking import make_chunks
from core.books.parse import parse_book
from core.paths import resolve_paths
from core.store.import_library import open_for_import
library = open_for_import(resolve_paths(sys.argv[1]))
library.db.execute("PRAGMA cache_size = 8")  # pages spill into the file before COMMIT
parsed = parse_book(Path(sys.argv[2]))
library.add_book(
    parsed=parsed, chunks=make_chunks(parsed.pages), sha256="0" * 64, original_path="",
    file_path="", file_size=1, title="t", before_commit=lambda: os._exit(3),
)
"""


def test_a_new_library_killed_in_its_first_import_opens_without_it(
    tmp_path: Path, books_dir: Path
) -> None:
    """The process dies inside the first import's transaction, some of its pages already in
    the file: the next open rolls the journal back, and the library is whole and empty."""
    home = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(home), str(books_dir / "metamorphosis.txt")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    database = home / "library.sqlite3"
    assert (home / "library.sqlite3-journal").stat().st_size > 0  # a hot journal was left
    assert database.stat().st_size > 60_000  # and pages of the book (a new library: 42 KB)
    library = Library.open(_paths(home))
    try:
        assert library.list_books() == []
        assert library.db.execute_sql("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert library.db.execute_sql("SELECT count(*) FROM page").fetchone()[0] == 0
        assert library.db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
        book = import_book(library, books_dir / "metamorphosis.txt", trim_memory=False).book
        assert book.page_count > 1
    finally:
        library.close()
    assert not os.path.exists(home / "library.sqlite3-journal")


def test_a_failure_on_the_deflating_thread_fails_the_import(
    tmp_path: Path, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pages' blocks are deflated on a thread of their own: what fails there fails the
    import in the caller's thread, and nothing of the book is kept."""
    from core.store import content_rows

    def broken(parts: list[bytes]) -> bytes:
        raise MemoryError("deflate")

    monkeypatch.setattr(content_rows, "deflate_block", broken)
    paths = _paths(tmp_path / "home")
    light = open_for_import(paths)
    assert light is not None
    try:
        with pytest.raises(MemoryError, match="deflate"):
            import_book(light, books_dir / "metamorphosis.txt", trim_memory=False)
        assert light.db.execute("SELECT count(*) FROM book").fetchone() == (0,)
        assert light.db.execute("SELECT count(*) FROM chunk_index").fetchone() == (0,)
    finally:
        light.close()
    assert list(paths.books.iterdir()) == []


def _schema_and_rows(db: sqlite3.Connection) -> tuple[Any, ...]:
    objects = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    tables = [n for t, n, _, sql in objects if t == "table" and "VIRTUAL" not in (sql or "")]
    rows = {n: sorted(db.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in tables}
    pragmas = [db.execute(f"PRAGMA {p}").fetchone() for p in ("user_version", "page_size")]
    return sorted(objects, key=repr), rows, pragmas


def test_the_new_library_image_is_the_frozen_schema(tmp_path: Path) -> None:
    """The file a new library starts from (core/store/frozen/new_library_image.py) is the
    one SQLite makes of the frozen schema: written again by
    ``python -m tests.core.store.new_library_image`` when that schema is."""
    from core.store.frozen import new_library_image
    from tests.core.store.new_library_image import made

    assert (new_library_image.VERSION, new_library_image.PAGE_SIZE) == (new_library.VERSION, 512)
    paths = _paths(tmp_path / "home")
    light = open_for_import(paths)
    assert light is not None
    try:
        assert _schema_and_rows(light.db) == _schema_and_rows(made())
        assert light.db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        light.close()
    assert sorted(p.name for p in paths.data.iterdir() if p.is_file()) == ["library.sqlite3"]


def test_a_new_library_made_meanwhile_is_kept(tmp_path: Path) -> None:
    """Another process makes the library between the look and the write: its file stays,
    and the import opens it."""
    paths = _paths(tmp_path / "home")
    paths.ensure()
    Library.open(paths).close()  # (as if made by another process just now)
    before = paths.database.read_bytes()
    assert not import_library._write_new(paths.database)
    assert paths.database.read_bytes() == before
    assert not [p for p in paths.data.iterdir() if ".new-" in p.name]  # (its part is gone)


def test_a_missing_copy_is_restored_through_it(tmp_path: Path, books_dir: Path) -> None:
    """The book is in the library but its copy is gone: importing the file again puts the
    copy back and points the book at it, as the whole library does."""
    paths = _paths(tmp_path / "home")
    book = books_dir / "metamorphosis.txt"
    light = open_for_import(paths)
    assert light is not None
    try:
        first = import_book(light, book, trim_memory=False).book
        Path(first.file_path).unlink()
        again = import_book(light, book, trim_memory=False)
    finally:
        light.close()
    assert again.already_present and again.book.id == first.id
    assert Path(again.book.file_path).read_bytes() == book.read_bytes()
    library = Library.open(paths)
    try:
        assert library.get_book(first.id) == again.book
    finally:
        library.close()

"""A calibre library as a source: read-only, in place, refreshed, its highlights imported."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from core.cli import main
from core.sources.calibre import CalibreLibrary
from core.sources.calibre_import import import_highlights, refresh, source_of
from core.store.library import Library
from core.sync.errors import SyncError
from tests.core.sources.calibre_library import calibredb


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "metadata.db").read_bytes()).hexdigest()


def test_reads_titles_authors_series_tags_covers(calibre_dir: Path) -> None:
    books = CalibreLibrary(calibre_dir).books()
    assert len(books) >= 10
    alice = next(b for b in books if b.title.startswith("Alice") and "EPUB" in b.formats)
    assert alice.authors == ("Lewis Carroll",)
    assert alice.series == "Wonderland" and alice.tags == ("classic", "fantasy")
    assert alice.cover is not None and alice.cover.is_file()
    assert alice.best_file() == alice.formats["EPUB"] and alice.formats["EPUB"].is_file()


def test_books_open_in_place_and_calibre_is_never_written(
    calibre_dir: Path, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _digest(calibre_dir)
    code = main(["library", "add-calibre", str(calibre_dir), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (report,) = json.loads(out)
    assert report["added"] >= 9 and any("password" in f for f in report["failed"])
    assert main(["books", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    alice = next(
        b
        for b in listed
        if b["title"] == "Alice's Adventures in Wonderland" and b["format"] == "epub"
    )
    assert alice["author"] == "Lewis Carroll"
    assert Path(alice["file_path"]).is_relative_to(calibre_dir)  # no copy
    assert not any((library.paths.books).iterdir())
    info = source_of(library, alice["id"])
    assert info is not None and info.series == "Wonderland" and "fantasy" in info.tags
    from core.books.covers import cover_file

    assert cover_file(library.paths.data, alice["sha256"]).is_file()
    assert _digest(calibre_dir) == before
    assert library.page(alice["id"], 3).text  # it reads


def test_refreshed_when_calibre_changes_it(calibre_dir: Path, library: Library) -> None:
    first = refresh(library, calibre_dir)
    assert refresh(library, calibre_dir).added == 0  # nothing changed: nothing read
    book = next(b for b in CalibreLibrary(calibre_dir).books() if b.title.startswith("Meta"))
    calibredb(calibre_dir, "set_metadata", str(book.id), "--field", "title:Die Verwandlung")
    again = refresh(library, calibre_dir)
    assert again.updated >= 1 and again.added == 0
    titles = {b.title for b in library.list_books()}
    assert "Die Verwandlung" in titles and first.added >= 9


def test_viewer_highlights_become_margin_highlights_once(
    calibre_dir: Path, library: Library
) -> None:
    if not CalibreLibrary(calibre_dir).highlights():
        pytest.skip("calibre-debug is not installed: no viewer highlight was made")
    refresh(library, calibre_dir)
    assert import_highlights(library, calibre_dir) == 1
    assert import_highlights(library, calibre_dir) == 0
    alice = next(
        b for b in library.list_books() if b.title.startswith("Alice") and b.format == "epub"
    )
    (hl,) = library.list_highlights(alice.id)
    assert hl.text.startswith("Alice was beginning") and hl.note == "the opening"
    assert hl.colour == "green" and "Alice was beginning" in library.page(alice.id, hl.page).text


def test_a_moved_library_is_said_in_words(calibre_dir: Path, library: Library) -> None:
    refresh(library, calibre_dir)
    count = len(library.list_books())
    shutil.move(calibre_dir, calibre_dir.with_name("Elsewhere"))
    with pytest.raises(SyncError) as err:
        refresh(library, calibre_dir, force=True)
    assert err.value.code == "moved" and "moved" in str(err.value)
    assert len(library.list_books()) == count  # nothing lost


def test_calibre_writing_at_the_same_time_is_busy_not_a_crash(calibre_dir: Path) -> None:
    lock = sqlite3.connect(calibre_dir / "metadata.db")
    lock.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SyncError) as err:
            CalibreLibrary(calibre_dir, timeout=0.2).books()
        assert err.value.code == "busy" and "calibre is changing" in str(err.value)
    finally:
        lock.rollback()
        lock.close()
    assert CalibreLibrary(calibre_dir).books()


def test_not_a_library(tmp_path: Path) -> None:
    (tmp_path / "metadata.db").write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(SyncError) as err:
        CalibreLibrary(tmp_path).books()
    assert err.value.code in ("bad_library", "unreadable")


def test_bench_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bench.bench_calibre import main as bench

    assert bench(["--smoke"]) == 0
    assert "MISSED" not in capsys.readouterr().out

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.books.importer import import_book, recover_incomplete
from core.errors import BookCode, BookError
from core.paths import resolve_paths
from core.progress import CancelToken
from core.store import models as m
from core.store.library import Library


@pytest.fixture
def library() -> Library:
    lib = Library.open(resolve_paths())
    yield lib
    lib.close()


def _counts(lib: Library) -> tuple[int, int, int, int, int, int]:
    return (
        m.Book.select().count(),
        m.Page.select().count(),
        m.Chunk.select().count(),
        m.TocEntry.select().count(),
        lib.db.execute_sql("SELECT count(*) FROM chunk_index").fetchone()[0],
        len(list(lib.paths.books.iterdir())),
    )


@pytest.mark.parametrize(
    "relative,title,fmt",
    [
        ("books/alice_in_wonderland.epub", "Alice's Adventures in Wonderland", "epub"),
        ("books/alice_in_wonderland.txt", "Alice's Adventures in Wonderland", "txt"),
        ("books/metamorphosis.epub", "Metamorphosis", "epub"),
        ("pdf/pdflatex-outline.pdf", "pdflatex-outline", "pdf"),
        ("pdf/multicolumn.pdf", "multicolumn", "pdf"),
    ],
)
def test_import_each_format(library: Library, relative: str, title: str, fmt: str) -> None:
    from tests.conftest import FIXTURES

    seen: list[float] = []
    result = import_book(library, FIXTURES / relative, progress=lambda f, msg: seen.append(f))
    book = result.book
    assert not result.already_present
    assert (book.title, book.format, book.status) == (title, fmt, "ready")
    assert book.page_count == m.Page.select().where(m.Page.book == book.id).count() > 0
    assert Path(book.file_path).read_bytes() == (FIXTURES / relative).read_bytes()
    assert Path(book.file_path).parent == library.paths.books
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    chunks = m.Chunk.select().where(m.Chunk.book == book.id).count()
    assert chunks == library.db.execute_sql("SELECT count(*) FROM chunk_index").fetchone()[0] > 0


def test_same_file_twice_returns_existing(
    library: Library, books_dir: Path, tmp_path: Path
) -> None:
    first = import_book(library, books_dir / "metamorphosis.txt")
    copy = tmp_path / "renamed.txt"
    copy.write_bytes((books_dir / "metamorphosis.txt").read_bytes())
    second = import_book(library, copy)
    assert second.already_present and second.book.id == first.book.id
    assert m.Book.select().count() == 1


@pytest.mark.parametrize("cancel_at", [0.0, 0.3, 0.85, 0.92])
def test_cancel_leaves_nothing(library: Library, books_dir: Path, cancel_at: float) -> None:
    token = CancelToken()

    def progress(fraction: float, message: str) -> None:
        if fraction >= cancel_at:
            token.cancel()

    with pytest.raises(BookError) as err:
        import_book(
            library, books_dir / "alice_in_wonderland.epub", progress=progress, cancel=token
        )
    assert err.value.code == BookCode.CANCELLED
    assert _counts(library) == (0, 0, 0, 0, 0, 0)


def test_failure_inside_transaction_rolls_back(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("core.books.importer.os.replace", broken)
    with pytest.raises(OSError):
        import_book(library, books_dir / "alice_in_wonderland.txt")
    assert _counts(library) == (0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize(
    "relative,code",
    [
        ("books/test_empty.epub", BookCode.EMPTY),
        ("books/test_corrupted.epub", BookCode.CORRUPT),
        ("pdf/libreoffice-writer-password.pdf", BookCode.PASSWORD),
        ("pdf/imagemagick-images.pdf", BookCode.NO_TEXT),
    ],
)
def test_bad_fixtures_leave_nothing(library: Library, relative: str, code: str) -> None:
    from tests.conftest import FIXTURES

    with pytest.raises(BookError) as err:
        import_book(library, FIXTURES / relative)
    assert err.value.code == code
    assert Path(relative).name in err.value.message
    assert _counts(library) == (0, 0, 0, 0, 0, 0)


def test_bad_paths(library: Library, tmp_path: Path) -> None:
    with pytest.raises(BookError) as err:
        import_book(library, tmp_path / "book.docx")
    assert err.value.code == BookCode.UNSUPPORTED
    with pytest.raises(BookError) as err:
        import_book(library, tmp_path / "nowhere.epub")
    assert err.value.code == BookCode.NOT_FOUND
    assert _counts(library)[0] == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_unreadable_file(library: Library, tmp_path: Path) -> None:
    path = tmp_path / "locked.txt"
    path.write_text("Some text here.")
    path.chmod(0)
    with pytest.raises(BookError) as err:
        import_book(library, path)
    assert err.value.code == BookCode.UNREADABLE


def test_recover_incomplete_removes_half_books_and_orphans(
    library: Library, books_dir: Path
) -> None:
    kept = import_book(library, books_dir / "metamorphosis.txt").book
    stale = m.Book.create(title="half", format="txt", sha256="x" * 64, status="importing")
    m.Page.create(book=stale.id, number=1, text="partial")
    (library.paths.books / ".importing-abc").write_bytes(b"partial copy")
    (library.paths.books / "orphan.epub").write_bytes(b"nobody")
    assert recover_incomplete(library) == 3
    assert [b.id for b in library.list_books()] == [kept.id]
    assert m.Page.select().where(m.Page.book == stale.id).count() == 0
    assert sorted(p.name for p in library.paths.books.iterdir()) == [Path(kept.file_path).name]


def test_delete_book_removes_everything(library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.txt").book
    library.add_highlight(book.id, 2, "Alice")
    library.add_note(book.id, "note")
    library.delete_book(book.id)
    assert _counts(library) == (0, 0, 0, 0, 0, 0)
    assert m.Highlight.select().count() == m.Note.select().count() == 0

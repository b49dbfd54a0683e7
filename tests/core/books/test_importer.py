from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.app import Margin
from core.books.importer import import_book, recover_incomplete, unlisted_copies
from core.errors import BookCode, BookError, StorageError
from core.paths import resolve_paths
from core.progress import CancelToken
from core.store import models as m
from core.store import owner
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


def _age(path: Path, seconds: float) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_recover_incomplete_removes_half_books_and_stale_copies_only(
    library: Library, books_dir: Path
) -> None:
    kept = import_book(library, books_dir / "metamorphosis.txt").book
    stale = m.Book.create(title="half", format="txt", sha256="x" * 64, status="importing")
    m.Page.create(book=stale.id, number=1, text="partial")
    leftover = library.paths.books / ".importing-abc"
    leftover.write_bytes(b"partial copy")
    _age(leftover, 60)
    fresh = library.paths.books / ".importing-fresh"
    fresh.write_bytes(b"just created, not locked yet")
    (library.paths.books / "orphan.epub").write_bytes(b"a finished copy no row names")
    assert recover_incomplete(library) == 2
    assert [b.id for b in library.list_books()] == [kept.id]
    assert m.Page.select().where(m.Page.book == stale.id).count() == 0
    assert sorted(p.name for p in library.paths.books.iterdir()) == sorted(
        [Path(kept.file_path).name, "orphan.epub", ".importing-fresh"]
    )
    assert [p.name for p in unlisted_copies(library)] == ["orphan.epub"]


def test_tidy_up_keeps_a_live_imports_copy(library: Library) -> None:
    """Another process importing holds an flock on its temporary copy: never removed."""
    library.paths.books.mkdir(parents=True, exist_ok=True)
    live = library.paths.books / ".importing-live"
    live.write_bytes(b"being written by another process")
    _age(live, 3600)
    fd = owner.lock_file(live)  # a separate open file description: conflicts like a process
    try:
        assert recover_incomplete(library) == 0
        assert live.exists()
    finally:
        os.close(fd)
    assert recover_incomplete(library) == 1
    assert not live.exists()


@pytest.mark.parametrize("loss", ["deleted", "empty"])
def test_lost_database_never_deletes_the_copies(
    library: Library, books_dir: Path, loss: str
) -> None:
    """A database deleted or emptied beside existing copies: tidy-up keeps every copy,
    recover-library adds them back."""
    first = import_book(library, books_dir / "metamorphosis.epub").book
    second = import_book(library, books_dir / "alice_in_wonderland.txt").book
    copies = sorted(p.name for p in library.paths.books.iterdir())
    paths = library.paths
    library.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    if loss == "empty":
        paths.database.write_bytes(b"")
    app = Margin.open(paths)
    try:
        assert app.tidy_up() == 0
        assert sorted(p.name for p in paths.books.iterdir()) == copies
        assert sorted(p.name for p in app.unlisted_copies()) == copies
        recovered = app.recover_library()
        assert [r.error for r in recovered] == [None, None]
        titles = sorted(b.title for b in app.library.list_books())
        assert titles == sorted([first.title, second.title])
        assert app.unlisted_copies() == []
        assert sorted(p.name for p in paths.books.iterdir()) == copies
        assert app.search.search_book(app.library.list_books()[0].id, "the")
    finally:
        app.close()


def test_reimport_restores_a_missing_copy(library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "metamorphosis.txt").book
    Path(book.file_path).unlink()
    again = import_book(library, books_dir / "metamorphosis.txt")
    assert again.already_present and again.book.id == book.id
    assert Path(again.book.file_path).read_bytes() == (books_dir / "metamorphosis.txt").read_bytes()


def test_disk_full_at_commit_leaves_no_copy_and_says_so(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy gets its final name just before COMMIT; when COMMIT fails for a full disk
    the copy goes too and the error says "disk full"."""
    import sqlite3

    real = library.add_book

    def full_at_commit(**kw: object) -> int:
        publish = kw.pop("before_commit")

        def then_fail() -> None:
            publish()  # type: ignore[operator]
            raise sqlite3.OperationalError("database or disk is full")

        return real(before_commit=then_fail, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(library, "add_book", full_at_commit)
    with pytest.raises(StorageError) as err:
        import_book(library, books_dir / "metamorphosis.txt")
    assert err.value.code == "disk_full" and "disk is full" in err.value.message
    assert list(library.paths.books.iterdir()) == []
    assert _counts(library) == (0, 0, 0, 0, 0, 0)


def test_delete_book_removes_everything(library: Library, books_dir: Path) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.txt").book
    library.add_highlight(book.id, 2, "Alice")
    library.add_note(book.id, "note")
    library.delete_book(book.id)
    assert _counts(library) == (0, 0, 0, 0, 0, 0)
    assert m.Highlight.select().count() == m.Note.select().count() == 0


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
def test_special_files_are_refused_without_reading(tmp_path: Path, kind: str) -> None:
    """A FIFO or a device named *.txt: a clear error at once, never a read that blocks or
    never ends. A real CLI subprocess, so a hang fails the test instead of hanging it."""
    from tests.reliability.clirun import run

    target = tmp_path / "book.txt"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(kind)
    done = run(tmp_path / "home", "import", str(target), timeout=30)
    assert done.returncode == 1
    assert "book.txt is not a regular file" in done.stderr
    assert done.stderr.count("\n") == 1
    books = tmp_path / "home" / "books"
    assert not books.exists() or list(books.iterdir()) == []


def test_scanned_pdf_imports_with_pages_and_no_text(library: Library, pdf_dir: Path) -> None:
    result = import_book(library, pdf_dir / "imagemagick-images.pdf")
    book = result.book
    assert book.page_count == 6 and book.format == "pdf"
    assert [t for _, t in library.page_texts(book.id)] == [""] * 6
    assert Path(book.file_path).is_file()


def test_protected_pdf_imports_with_its_password_which_is_never_stored(
    library: Library, pdf_dir: Path
) -> None:
    with pytest.raises(BookError) as err:
        import_book(library, pdf_dir / "libreoffice-writer-password.pdf", password="wrong")
    assert err.value.code == BookCode.WRONG_PASSWORD
    assert "is wrong, so nothing was imported" in err.value.message
    assert _counts(library) == (0, 0, 0, 0, 0, 0)
    result = import_book(
        library, pdf_dir / "libreoffice-writer-password.pdf", password="openpassword"
    )
    assert "Lorem ipsum" in library.page(result.book.id, 1).text
    library.close()
    for file in library.paths.data.rglob("*"):
        if file.is_file():
            assert b"openpassword" not in file.read_bytes(), file


def test_memory_is_handed_back_after_a_new_book_unless_the_process_ends(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.books import importer

    trims: list[bool] = []
    monkeypatch.setattr(importer, "give_back_memory", lambda: trims.append(True) or True)
    book = books_dir / "metamorphosis.txt"
    import_book(library, book, trim_memory=False)  # margin import: its process ends next
    assert trims == []
    import_book(library, book)  # already there: nothing was parsed
    assert trims == []
    import_book(library, books_dir / "alice_in_wonderland.txt")
    assert trims == [True]


@pytest.mark.parametrize("sendfile", ["kernel", "refused", "in parts"])
def test_the_copy_is_the_file_byte_for_byte(
    library: Library, books_dir: Path, sendfile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library's copy is made by the kernel (sendfile), or read and written where the
    system refuses that, or partly each; the hash names the same bytes."""
    import hashlib

    from core.books import importer

    real = os.sendfile

    def refused(*args: object) -> int:
        raise OSError(22, "Invalid argument")

    def in_parts(out: int, src: int, offset: int, count: int) -> int:
        if offset >= 1000:
            raise OSError(22, "Invalid argument")  # part sent, then refused
        return real(out, src, offset, min(count, 1000))

    if sendfile != "kernel":
        monkeypatch.setattr(importer.os, "sendfile", refused if sendfile == "refused" else in_parts)
    source = books_dir / "alice_in_wonderland.txt"
    result = import_book(library, source)
    copy = Path(result.book.file_path)
    assert copy.read_bytes() == source.read_bytes()
    assert result.book.sha256 == hashlib.sha256(source.read_bytes()).hexdigest()

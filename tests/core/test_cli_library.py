from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_list_show_search_page_position(
    capsys: pytest.CaptureFixture[str], books_dir: Path, pdf_dir: Path
) -> None:
    code, out, err = run(
        capsys,
        "import",
        str(books_dir / "alice_in_wonderland.epub"),
        str(pdf_dir / "pdflatex-outline.pdf"),
    )
    assert code == 0, err
    assert "Alice's Adventures in Wonderland" in out and "97 pages" in out
    code, out, _ = run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    assert "already in the library" in out
    code, out, _ = run(capsys, "books", "--json")
    books = json.loads(out)
    assert {b["title"] for b in books} == {"Alice's Adventures in Wonderland", "pdflatex-outline"}
    code, out, _ = run(capsys, "show", "alice")
    assert "by Lewis Carroll" in out and "CHAPTER I. Down the Rabbit-Hole" in out
    code, out, _ = run(capsys, "show", "pdflatex", "--json")
    assert json.loads(out)["toc"][0] == {"title": "Foo", "level": 1, "page": 2, "chapter": None}
    code, out, _ = run(
        capsys, "search", "alice", "Cheshire", "--limit", "2", "--until-page", "45", "--json"
    )
    hits = json.loads(out)
    assert len(hits) == 2 and all(h["end_page"] <= 45 for h in hits)
    code, out, _ = run(capsys, "page", "pdflatex", "2")
    assert "page 2" in out and "Hello, here is some text" in out
    code, out, _ = run(capsys, "position", "alice", "30")
    assert "now on page 30 of 97" in out and "read up to page 30" in out
    code, out, _ = run(capsys, "read-to", "alice", "12")
    assert code == 0 and "now on page 30 of 97" in out and "read up to page 12" in out
    assert "Looking ahead — the assistant still stops at p. 12" in out
    code, out, _ = run(capsys, "show", "alice", "--json")
    shown = json.loads(out)
    assert (shown["page"], shown["read_to"]) == (30, 12)
    code, out, _ = run(capsys, "books", "--json")
    alice = next(b for b in json.loads(out) if b["title"].startswith("Alice"))
    assert (alice["page"], alice["read_to"]) == (30, 12)
    code, out, _ = run(capsys, "finished", "alice")
    assert "finished" in out
    code, out, _ = run(capsys, "notes", "alice", "--add", "Remember the tarts", "--page", "3")
    assert code == 0
    code, out, _ = run(capsys, "highlights", "alice", "--markdown")
    assert out.startswith("# Alice's Adventures in Wonderland") and "Remember the tarts" in out


def test_errors_are_one_line_and_nonzero(
    capsys: pytest.CaptureFixture[str], books_dir: Path, tmp_path: Path
) -> None:
    code, out, err = run(capsys, "import", str(books_dir / "test_corrupted.epub"))
    assert code == 1 and "test_corrupted.epub is damaged" in err and "Traceback" not in err
    code, _, err = run(capsys, "show", "nothing-here")
    assert code == 1 and err.count("\n") == 1 and err.startswith("margin: ")
    run(capsys, "import", str(books_dir / "metamorphosis.txt"))
    code, _, err = run(capsys, "page", "1", "9999")
    assert code == 1 and "there is no page 9999" in err
    code, _, err = run(capsys, "position", "1", "0")
    assert code == 2 and err.count("\n") == 1 and "out of range" in err
    for huge in ("99999999999999999999", "9223372036854775808"):
        code, _, err = run(capsys, "search", "1", "gregor", "--until-page", huge)
        assert code == 2 and "out of range" in err and "went wrong" not in err
        code, _, err = run(capsys, "page", "1", huge)
        assert code == 2 and "out of range" in err
    code, _, err = run(capsys, "delete", "1")
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, "delete", "1", "--yes")
    assert code == 0 and "Deleted" in out
    code, out, _ = run(capsys, "books")
    assert "empty" in out


def test_real_subprocess_with_data_dir(tmp_path: Path, books_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MARGIN_HOME"}
    data = tmp_path / "data"
    cmd = [sys.executable, "-m", "core.cli", "--data-dir", str(data)]
    done = subprocess.run(
        [*cmd, "import", str(books_dir / "metamorphosis.epub")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (data / "library.sqlite3").exists()
    done = subprocess.run(
        [*cmd, "search", "Metamorphosis", "Gregor", "--limit", "1"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0 and "Gregor" in done.stdout
    done = subprocess.run(
        [*cmd, "show", "Nope"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr


def test_reimport_fixes_an_old_import_and_keeps_what_the_reader_made(
    capsys: pytest.CaptureFixture[str], books_dir: Path
) -> None:
    """Books imported before schema v5 keep their (wrong) contents pages until read again."""
    from core.paths import resolve_paths
    from core.store.library import Library

    assert run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))[0] == 0
    lib = Library.open(resolve_paths())
    book = lib.find_book("alice")
    right = {t.title: t.page for t in lib.toc(book.id)}
    lib.db.execute_sql("UPDATE toc_entry SET page = 2 WHERE book_id = ?", (book.id,))
    lib.db.execute_sql("UPDATE book SET parser_version = 1 WHERE id = ?", (book.id,))
    lib.add_note(book.id, "my note", page=30)
    lib.add_highlight(book.id, 30, "a passage")
    lib.set_position(book.id, 25)
    lib.close()
    code, out, _ = run(capsys, "show", "alice")
    assert "its contents pages may be wrong" in out and "margin reimport" in out
    code, out, err = run(capsys, "reimport", "alice")
    assert code == 0 and "kept" in out, err
    lib = Library.open(resolve_paths())
    again = lib.find_book("alice")
    assert {t.title: t.page for t in lib.toc(again.id)} == right
    assert not again.outdated and (again.page, again.read_to) == (25, 25)
    assert [n.text for n in lib.list_notes(again.id)] == ["my note"]
    assert len(lib.list_highlights(again.id)) == 1
    lib.close()
    assert "may be wrong" not in run(capsys, "show", "alice")[1]


def test_lost_database_says_so_and_recover_library_adds_the_books_back(
    capsys: pytest.CaptureFixture[str], books_dir: Path
) -> None:
    from core.paths import resolve_paths

    code, out, _ = run(capsys, "import", str(books_dir / "metamorphosis.txt"))
    assert code == 0
    paths = resolve_paths()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{paths.database}{suffix}").unlink(missing_ok=True)
    code, out, err = run(capsys, "books")
    assert code == 0 and "empty" in out
    assert "1 book copy is in" in err and "margin recover-library" in err
    code, out, err = run(capsys, "recover-library")
    assert code == 0, err
    assert "Metamorphosis" in out and "(recovered)" in out
    code, out, err = run(capsys, "books")
    assert "Metamorphosis" in out and "recover-library" not in err
    code, out, _ = run(capsys, "recover-library")
    assert code == 0 and "nothing to recover" in out


def test_search_folds_passages_after_where_you_have_read(
    capsys: pytest.CaptureFixture[str], books_dir: Path
) -> None:
    """Issue 46 item 4: at read to p. 3, `margin search BOOK` never shows a later passage."""
    run(capsys, "import", str(books_dir / "alice_in_wonderland.epub"))
    run(capsys, "read-to", "alice", "3")
    code, out, err = run(capsys, "search", "alice", "Cheshire")
    assert code == 0, err
    assert "Cheshire" not in out.replace('"Cheshire"', "")
    assert "more passages after where you have read (p. 3)" in out and "--beyond-read" in out
    code, out, _ = run(capsys, "search", "alice", "Cheshire", "--json")
    assert json.loads(out) == []
    code, out, _ = run(capsys, "search", "alice", "Cheshire", "--beyond-read")
    assert "Cheshire" in out and "after where you have read" not in out
    code, out, _ = run(capsys, "search", "alice", "rabbit")  # within the bound: shown
    assert "Rabbit" in out or "rabbit" in out


def test_a_short_command_starts_no_vector_worker_it_would_kill(
    capsys: pytest.CaptureFixture[str], books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``margin import`` and ``margin search`` end in a second: a vectors worker started
    then was killed before it stored anything (once with an EOFError traceback). They leave
    the vectors to the next long-lived session, which asks for whatever is missing."""
    import core.search.vector_indexer as vectors

    asked: list[object] = []
    monkeypatch.setattr(vectors.VectorIndexer, "request", lambda self: asked.append(self))
    code, _, err = run(capsys, "import", str(books_dir / "metamorphosis.epub"))
    assert code == 0, err
    code, out, _ = run(capsys, "search", "Metamorphosis", "Gregor", "--limit", "1")
    assert code == 0 and "Gregor" in out
    assert asked == []
    from core.app import Margin
    from core.paths import resolve_paths

    app = Margin.open(resolve_paths())  # a long-lived session (the window) asks for them
    try:
        vectors.request_vectors(app.library.db)
        assert len(asked) == 1
    finally:
        app.close()


def test_search_names_the_printed_pages_where_the_book_has_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 45, item 8: the page-list's numbers, as a citation gives them."""
    from tests.core.books.test_epub_w3c import _page_list_book

    code, _, err = run(capsys, "import", str(_page_list_book(tmp_path)))
    assert code == 0, err
    code, out, _ = run(capsys, "search", "1", "forty begins", "--beyond-read")
    assert code == 0 and "(p. 40 in print)" in out


def test_import_builds_its_own_parser_alone_and_reads_the_same(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``margin import`` parses with its own command only (issue 41: the others cost 10 ms
    of a text book's import, its group's 3 ms); what it reads is what the whole parser
    reads, its own help is the same, and help before the command still lists every
    command."""
    from core.cli import OWN_PARSER, build_parser

    args = ["--data-dir", "/nowhere", "import", "a.txt", "b.epub", "--json", "--password", "x"]
    alone, whole = build_parser("import"), build_parser()
    assert vars(alone.parse_args(args)) == vars(whole.parse_args(args))
    assert "conversations" in whole.format_help() and "conversations" not in alone.format_help()
    assert "books" in whole.format_help() and "books" not in alone.format_help()
    with pytest.raises(SystemExit):
        alone.parse_args(["import", "--help"])
    own_help = capsys.readouterr().out
    with pytest.raises(SystemExit):
        whole.parse_args(["import", "--help"])
    assert capsys.readouterr().out == own_help and "--password" in own_help
    assert set(OWN_PARSER) == {"import"}  # (a command added there gets a line like these)
    code, out, _ = run(capsys, "--help", "import")
    assert code == 0 and "conversations" in out and "import" in out

"""``margin search --all``: passages from every book, grouped by book, each book within where
the reader has read it unless they ask for whole books (core/cli/library.py, BookSearch.search_all)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_all_groups_by_book_within_each_bound(
    capsys: pytest.CaptureFixture[str], books_dir: Path
) -> None:
    code, _, err = run(
        capsys,
        "import",
        str(books_dir / "alice_in_wonderland.epub"),
        str(books_dir / "metamorphosis.epub"),
    )
    assert code == 0, err
    assert run(capsys, "read-to", "alice", "12")[0] == 0
    assert run(capsys, "finished", "metamorphosis")[0] == 0
    code, out, err = run(capsys, "search", "--all", "sister", "--json")
    assert code == 0, err
    groups = json.loads(out)
    titles = [g["title"] for g in groups]
    assert any(t.startswith("Alice") for t in titles) and "Metamorphosis" in titles
    for group in groups:
        assert 1 <= len(group["passages"]) <= 10
        assert all(p["book_id"] == group["book_id"] for p in group["passages"])
    alice = next(g for g in groups if g["title"].startswith("Alice"))
    assert all(p["end_page"] <= 12 for p in alice["passages"]), "Alice is read to page 12"
    code, out, _ = run(capsys, "search", "--all", "sister", "--beyond-read", "--json")
    alice = next(g for g in json.loads(out) if g["title"].startswith("Alice"))
    assert any(p["end_page"] > 12 for p in alice["passages"])
    # front matter never shows: the licence names Project Gutenberg in every EPUB
    code, out, _ = run(capsys, "search", "--all", "Project Gutenberg license", "--beyond-read")
    assert "Gutenberg" not in out.replace("Project Gutenberg license", "")
    code, out, _ = run(capsys, "search", "--all", "Cheshire grin", "--beyond-read")
    assert code == 0 and out.startswith("Alice"), "the book with every word comes first"
    code, out, _ = run(capsys, "search", "--all", "zzzqqq")
    assert code == 0 and "No passages in your library match" in out


def test_search_needs_a_query(capsys: pytest.CaptureFixture[str], books_dir: Path) -> None:
    run(capsys, "import", str(books_dir / "metamorphosis.epub"))
    code, _, err = run(capsys, "search", "metamorphosis")
    assert code != 0 and "margin search BOOK QUERY" in err and "--all" in err
    code, _, err = run(capsys, "search", "--all", "Gregor", "--until-page", "3")
    assert code != 0 and "--beyond-read" in err


def test_a_word_in_most_of_the_library_lists_the_books_in_hand_first(
    tmp_path: Path, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past RANKED_MAX matching passages (ranking them all would take tens of milliseconds
    in a large library) the books come in the library's order, last opened first, each with
    its first passages that match, within its bound, never its front matter."""
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.search import BookSearch, everywhere
    from core.store.library import Library

    lib = Library.open(resolve_paths(tmp_path / "home"))
    alice = import_book(lib, books_dir / "alice_in_wonderland.epub").book
    gregor = import_book(lib, books_dir / "metamorphosis.epub").book
    lib.set_read_to(alice.id, 12)
    lib.set_finished(gregor.id, True)
    lib.mark_opened(alice.id)  # the book in hand, though Metamorphosis is newer
    search = BookSearch(lib.db)
    monkeypatch.setattr(everywhere, "RANKED_MAX", 0)
    in_hand = search.search_all("sister", per_book=2)
    assert [b for b, _ in in_hand] == [alice.id, gregor.id]
    for _, hits in in_hand:
        assert 1 <= len(hits) <= 2
        assert [h.chunk_id for h in hits] == sorted(h.chunk_id for h in hits)  # book order
        assert all("sister" in h.text.lower() for h in hits)
        assert not any(everywhere.is_front_matter(h.text) for h in hits)
    assert all(h.end_page <= 12 for h in dict(in_hand)[alice.id])
    whole = dict(search.search_all("sister", per_book=2, bounded=False))
    assert whole[alice.id] and search.search_all("zzzqqq") == []
    lib.close()

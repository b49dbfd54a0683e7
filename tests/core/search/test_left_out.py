"""`margin search --all` says how many books it left out because the reader has not read
that far, and --beyond-read includes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books.importer import import_book
from core.cli import main
from core.store.library import Library


def test_search_all_counts_the_books_past_the_bound(
    library: Library, books_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alice = import_book(library, books_dir / "alice_in_wonderland.epub").book
    library.set_read_to(alice.id, 40)
    import_book(library, books_dir / "pride_and_prejudice.epub")  # not started
    import_book(library, books_dir / "the_adventures_of_sherlock_holmes.epub")  # not started
    library.close()
    assert main(["search", "--all", "sister"]) == 0
    out = capsys.readouterr().out
    assert "Alice" in out and "Pride and Prejudice" not in out
    assert "2 books you have not read that far also match (--beyond-read includes them)." in out
    assert main(["search", "--all", "Bingley"]) == 0
    out = capsys.readouterr().out
    assert "No passages" in out and "1 book you have not read that far also matches" in out
    assert main(["search", "--all", "Bingley", "--beyond-read"]) == 0
    out = capsys.readouterr().out
    assert "Pride and Prejudice" in out and "not read that far" not in out

"""Standard Ebooks keep the title page's words and the "Imprint" heading for screen readers
only (their CSS puts them off screen: ``position: absolute; left: -999em``); calibre does not
show them, and neither does Margin. What the CSS does not hide stays."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books.bookcss import declarations
from core.books.importer import import_book
from core.cli import main
from core.store.library import Library


def test_standard_ebooks_hidden_title_page_text_is_left_out(
    library: Library, books_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    book = import_book(library, books_dir / "pride_and_prejudice.epub").book
    library.close()
    assert main(["page", str(book.id), "1"]) == 0
    title_page = capsys.readouterr().out
    assert "By Jane Austen" not in title_page, "▶ the hidden title page text is shown"
    assert title_page.count("Pride and Prejudice") == 1  # the page's header line only
    assert main(["page", str(book.id), "2"]) == 0
    imprint = capsys.readouterr().out
    assert "Imprint" not in imprint, "▶ the hidden Imprint heading is shown"
    assert "product of many hours of hard work" in imprint
    assert main(["page", str(book.id), "3"]) == 0
    assert "It is a truth universally acknowledged" in capsys.readouterr().out
    assert main(["show", str(book.id)]) == 0
    contents = capsys.readouterr().out
    assert "Titlepage ... p. 1" in contents and "Imprint ... p. 2" in contents


def test_only_far_off_screen_or_display_none_hides() -> None:
    assert "-margin-hidden" in declarations("left: -999em; position: absolute")
    assert "-margin-hidden" in declarations("display: none")
    assert "-margin-hidden" not in declarations("left: -2em; position: absolute")
    assert "-margin-hidden" not in declarations("left: -999em")  # not taken out of the flow
    assert "-margin-hidden" not in declarations("margin-left: -999em")

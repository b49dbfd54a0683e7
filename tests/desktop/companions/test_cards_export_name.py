"""Issue 46 item 11: the Anki export dialog starts in the home folder with a clean file name
(a title holding "../" put the file elsewhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.books.importer import import_book
from core.store import models as m
from core.store.library import Library
from desktop.companions import cards_panel
from desktop.companions.cards_panel import CardsPanel


def test_the_anki_dialog_starts_at_home_with_a_clean_name(
    library: Library, books_dir: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = import_book(library, books_dir / "alice_in_wonderland.epub").book
    m.Book.update(title="../../../../tmp/evil\x07 ..").where(m.Book.id == book.id).execute()
    asked: list[str] = []

    def dialog(parent: Any, caption: str, default: str, filters: str) -> tuple[str, str]:
        asked.append(default)
        return "", ""

    monkeypatch.setattr(cards_panel.QFileDialog, "getSaveFileName", dialog)
    panel = CardsPanel(library)
    qtbot.addWidget(panel)
    panel.feed.book_id = book.id
    panel.export()
    default = Path(asked[0])
    assert default.parent == Path.home()
    assert default.suffix == ".apkg" and ".." not in default.name and "/" not in default.name
    assert "\x07" not in default.name

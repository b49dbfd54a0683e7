"""After Book › Re-read, the Notes panel says which notes and highlights lost their words
(kept at their old page), and only those."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox

from core.store.library import Library
from desktop.highlights.notes_panel import LOST_ROLE, ROLE
from tests.desktop.reader.conftest import alice_window
from tests.support.shots import save_shot, shots_wanted


def test_the_notes_panel_marks_what_was_not_found_after_a_reread(
    library: Library, books_dir: Path, qtbot: Any, real_font: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    monkeypatch.setattr(
        QMessageBox, "information", staticmethod(lambda _p, title, *a: said.append(title))
    )
    with alice_window(library, books_dir, qtbot, 12) as (win, book):
        text = library.page(book.id, 12).text
        kept = library.add_highlight(book.id, 12, text[200:260], note="still here")
        gone = library.add_highlight(book.id, 12, "Words that never were in Wonderland, not once")
        note = library.add_note(book.id, "about the pool of tears", page=12)
        library.add_note(book.id, "a note about the whole book")  # no page: nothing to lose
        quote = {"exact": "A sentence the book no longer has at all, anywhere", "page": 12}
        library.db.execute_sql(
            "UPDATE note SET quote = ? WHERE id = ?", (json.dumps(quote), note.id)
        )
        win.books.reread_current()
        qtbot.waitUntil(lambda: bool(said), timeout=20000)
        win.panels.open_notes()
        panel = win.panels.notes_panel
        qtbot.waitUntil(lambda: panel.items.count() == 4, timeout=5000)
        rows = {
            (
                panel.items.item(i).data(ROLE)[0],
                panel.items.item(i).data(ROLE)[1],
            ): panel.items.item(i)
            for i in range(panel.items.count())
        }
        lost = {key for key, item in rows.items() if item.data(LOST_ROLE)}
        assert lost == {("highlight", gone.id), ("note", note.id)}
        assert (
            rows[("highlight", gone.id)]
            .text()
            .startswith("Not found after re-reading (kept at p. 12)")
        )
        assert rows[("note", note.id)].font().italic()
        assert not rows[("highlight", kept.id)].text().startswith("Not found")
        assert "2 of these no longer match the book's text" in panel.title.text()
        if shots_wanted():
            for theme in ("light", "dark"):
                win.set_theme(theme)
                qtbot.wait(30)
                save_shot(win.grab(), f"notes-lost-{theme}.png")
            win.set_theme("light")

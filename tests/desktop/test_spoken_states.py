"""State changes a screen reader hears without moving (issue 43, item 5): Read to here, looking
ahead and back, a Find result, a highlight saved, caret browsing on and off. Each goes through
``announce``, which also shows the notice Orca 43 speaks (``test_orca.py`` listens to Orca)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop.accessibility import Notice
from tests.desktop.conftest import open_alice


def said(heard: list[tuple[str, Any]]) -> list[str]:
    return [text for text, _ in heard]


def test_state_changes_are_spoken(window: Any, books_dir: Path, qtbot: Any, heard: Any) -> None:
    open_alice(window, books_dir, page=5, read_to=5)
    reader = window.reader
    reader.go_to_page(60)  # a far jump (a short one, three screens or less, is reading on)
    qtbot.waitUntil(lambda: any("Looking ahead" in t for t in said(heard)), timeout=3000)
    reader.mark_read_to_here()
    assert any(t.startswith("Read to here: the assistant now reads up to p. ") for t in said(heard))
    assert "Back where reading stopped." in said(heard)
    # the words are in a notification Orca speaks, not only in the announcement
    notices = window.findChildren(Notice)
    assert notices and notices[-1].accessibleName() in said(heard)
    find = reader.side.finder
    find.box.setText("White Rabbit")
    find.run()
    qtbot.waitUntil(lambda: any(t.endswith("matches") for t in said(heard)), timeout=5000)
    assert reader.selection_actions.save_highlight(8, "the White Rabbit", note="")
    assert "Highlight saved." in said(heard)
    view = reader.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F7)
    qtbot.keyClick(view, Qt.Key.Key_F7)
    assert said(heard)[-2:] == ["Caret browsing on.", "Caret browsing off."], said(heard)

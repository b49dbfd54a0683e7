"""The chat's starters under an empty conversation: without a model they open the companion
tabs; with one they ask (the prompt from prompts/, the question as shown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.store.library import Library
from tests.desktop.companions.conftest import shoot, window_at


def test_starters_open_tabs_without_a_model(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with window_at(library, books_dir, qtbot, 33) as (win, _book):
        win.panes.set_side_visible(False)
        starters = win.chat.starters
        qtbot.waitUntil(starters.isVisible, timeout=10000)
        assert starters.buttons["Recap"].text() == "Recap chapters 1–4"
        shoot(win, "starters")
        win.resize(1024, 700)  # a narrow chat: the starters stack, the chat keeps its width
        qtbot.wait(100)
        assert starters.width() <= win.chat.width()
        for button in starters.buttons.values():  # every button whole, none cut off
            assert button.isVisible() and button.geometry().right() <= starters.width()
            assert button.width() >= button.sizeHint().width() - 2
        shoot(win, "starters_narrow")
        QTest.mouseClick(starters.buttons["Who's who so far"], Qt.MouseButton.LeftButton)
        assert win.reader.side.isVisible() and win.reader.side.current_name() == "X-Ray"
        QTest.mouseClick(starters.buttons["Quiz me"], Qt.MouseButton.LeftButton)
        assert win.reader.side.current_name() == "Cards"


def test_starters_ask_with_a_model(
    qtbot: Any,
    fake_anthropic: Any,
    claude_window: tuple[Any, Any],
) -> None:
    from tests.fakes.anthropic_server import Reply

    win, _book = claude_window
    starters = win.chat.starters
    qtbot.waitUntil(starters.isVisible, timeout=10000)
    fake_anthropic.responder = lambda body: Reply.text("First question: who fell down?")
    QTest.mouseClick(starters.buttons["Quiz me"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "who fell down" in win.chat.transcript_text(), timeout=15000)
    sent = str(fake_anthropic.message_requests[0].body)
    assert "Quiz me on what I have read so far" in sent
    assert "Quiz me" in win.chat.transcript_text()
    qtbot.waitUntil(lambda: not starters.isVisible(), timeout=5000)


def test_a_book_removed_meanwhile_is_no_error(app: Any, qtbot: Any) -> None:
    from desktop.chat.starters import Starters
    from desktop.companions.recap_panel import RecapPanel
    from desktop.companions.xray_panel import XRayPanel

    starters = Starters(app)
    qtbot.addWidget(starters)
    starters.update_for(999, True)  # no such book (removed while the read was under way)
    xray, story = XRayPanel(app.library), RecapPanel(app.library)
    for panel in (xray, story):
        qtbot.addWidget(panel)
        panel.show()
        panel.feed.book_opened(999)
    qtbot.waitUntil(lambda: "not available" in xray.feed.status.text(), timeout=10000)
    assert "There is no book 999" in xray.feed.status.text()
    qtbot.wait(200)
    assert not starters.isVisible()

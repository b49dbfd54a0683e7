"""The X-Ray and story-so-far tabs in the window, driven by real clicks and keys: what they
show stays within the bound, a page link jumps there, "Who is this?" opens a name's entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from core.companions import cards
from core.store.library import Library
from tests.desktop.companions.conftest import click_tab, priced_model, shoot, window_at
from tests.desktop.reader.conftest import press, text_view
from tests.support.browser import click_at, links


def test_xray_tab_bounded_clickable_and_who_is_this(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    with window_at(library, books_dir, qtbot, 30) as (win, book):
        click_tab(win, "X-Ray")
        panel = win.reader.side.panel("X-Ray")
        qtbot.waitUntil(lambda: panel.made is not None, timeout=10000)
        names = [panel.list.item(i).text() for i in range(panel.list.count())]
        assert names[0].startswith("Alice — ")
        assert not [n for n in names if n.startswith("Hatter")]  # first named on p. 43
        assert "pages 1–30" in panel.feed.status.text()
        pages = [int(h.split(":")[1].split("?")[0]) for h, _ in links(panel.detail)]
        assert pages and max(pages) <= 30
        # choose the Rabbit with the keyboard, then click one of its pages
        panel.filter.setFocus()
        QTest.keyClicks(panel.filter, "rabb")
        visible = [panel.list.item(i) for i in range(panel.list.count())]
        visible = [i for i in visible if not i.isHidden()]
        assert [i.text().split(" — ")[0] for i in visible] == ["Rabbit"]
        panel.list.setCurrentItem(visible[0])
        shoot(win, "xray")
        href, position = [x for x in links(panel.detail) if "mark=" in x[0]][-1]
        target = int(href.split(":")[1].split("?")[0])
        click_at(panel.detail, position)
        qtbot.waitUntil(lambda: win.reader.page == target, timeout=5000)
        # a name selected in the book, then Ctrl+Shift+X: its entry
        view = text_view(win.reader)
        cursor = view.document().find("Alice", view.textCursor())
        assert not cursor.isNull()
        view.setTextCursor(cursor)
        view.setFocus()
        panel.list.setCurrentRow(3)
        press(
            view,
            Qt.Key.Key_X,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
        assert panel.list.currentItem().text().startswith("Alice — ")
        assert win.reader.side.current_name() == "X-Ray"
        # the reader lowers the bound: the tab never shows a page after it
        library.set_read_to(book.id, 10)
        win.reader.book = library.get_book(book.id)
        panel.feed.refresh()
        qtbot.waitUntil(lambda: panel.feed.bound == 10, timeout=10000)
        assert not [
            i for i in range(panel.list.count()) if panel.list.item(i).text().startswith("Dodo")
        ]
        for i in range(panel.list.count()):
            panel.list.setCurrentRow(i)
            hrefs = [h for h, _ in links(panel.detail)]
            assert max(int(h.split(":")[1].split("?")[0]) for h in hrefs) <= 10


def test_story_so_far_tab(library: Library, books_dir: Path, qtbot: Any, real_font: str) -> None:
    with window_at(library, books_dir, qtbot, 33) as (win, _book):
        click_tab(win, "Story so far")
        panel = win.reader.side.panel("Story so far")
        qtbot.waitUntil(lambda: panel.made is not None, timeout=10000)
        text = panel.view.toPlainText()
        assert "CHAPTER I. Down the Rabbit-Hole" in text
        assert "CHAPTER IV" in text and "You are here: read to p. 33" in text
        assert "CHAPTER VI" not in text  # starts after the bound
        shoot(win, "recap")
        href, position = links(panel.view)[1]
        click_at(panel.view, position)
        target = int(href.split(":")[1].split("?")[0])
        qtbot.waitUntil(lambda: win.reader.page == target, timeout=5000)


def test_story_tab_written_by_the_model_with_cost_first_budget_and_stop(
    qtbot: Any,
    fake_anthropic: Any,
    claude_window: tuple[Any, Any],
) -> None:
    import dataclasses

    from tests.fakes.anthropic_server import Reply

    win, _book = claude_window
    priced_model(win)
    click_tab(win, "Story so far")
    panel = win.reader.side.panel("Story so far")
    qtbot.waitUntil(lambda: panel.made is not None, timeout=10000)
    asked: list[str] = []
    panel.feed.job.confirm = lambda text: asked.append(text) or True
    # past the budget: refused, in words, before anything is sent
    win.app._settings = dataclasses.replace(win.app.settings, budget_per_book_usd=0.0001)
    QTest.mouseClick(panel.feed.job.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "past its budget" in panel.feed.job.note.text(), timeout=10000)
    assert fake_anthropic.message_requests == [] and asked == []
    win.app._settings = dataclasses.replace(win.app.settings, budget_per_book_usd=0.0)
    fake_anthropic.responder = lambda body: Reply.text("Alice followed the Rabbit and fell.")
    QTest.mouseClick(panel.feed.job.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Used" in panel.feed.job.note.text(), timeout=20000)
    assert asked and asked[0].startswith("4 calls to claude-haiku-4-5: About ")
    assert "tokens, ~$0.0" in asked[0]
    qtbot.waitUntil(lambda: "Alice followed the Rabbit" in panel.view.toPlainText(), timeout=10000)
    assert len(fake_anthropic.message_requests) == 4  # one per chapter read
    from desktop.chat.history import cost_text

    assert "This book: 480 tokens" in cost_text(win.app.agent, _book.id, None)
    shoot(win, "recap_model")
    # again: nothing left to ask
    QTest.mouseClick(panel.feed.job.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "already written" in panel.feed.job.note.text(), timeout=10000)
    assert len(fake_anthropic.message_requests) == 4
    # X-Ray notes, stopped after the first: what is done is kept
    click_tab(win, "X-Ray")
    xray = win.reader.side.panel("X-Ray")
    qtbot.waitUntil(lambda: xray.made is not None, timeout=10000)
    xray.feed.job.confirm = lambda text: True
    fake_anthropic.responder = lambda body: Reply.text("Someone Alice met.", tokens_per_second=4.0)
    QTest.mouseClick(xray.feed.job.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(xray.feed.job.stop_button.isVisible, timeout=10000)
    qtbot.waitUntil(lambda: len(fake_anthropic.message_requests) >= 5, timeout=10000)
    QTest.mouseClick(xray.feed.job.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "Stopped" in xray.feed.job.note.text(), timeout=10000)
    assert len(fake_anthropic.message_requests) < 4 + 20


def test_cards_tab_review_and_export(
    library: Library, books_dir: Path, qtbot: Any, real_font: str, tmp_path: Path
) -> None:
    import sqlite3
    import zipfile

    with window_at(library, books_dir, qtbot, 20) as (win, book):
        library.add_highlight(book.id, 3, "Alice was beginning to get very tired", note="Bored")
        library.add_note(book.id, "Why a pocket watch?", page=4)
        click_tab(win, "Cards")
        panel = win.reader.side.panel("Cards")
        every = len(cards.cards(library, book.id))  # with who-said-it cards from dialogue
        qtbot.waitUntil(lambda: panel.total == every, timeout=10000)
        assert f"{every} due of {every}" in panel.feed.status.text()
        assert "Alice was beginning" in panel.card.toPlainText()
        QTest.mouseClick(panel.show_button, Qt.MouseButton.LeftButton)
        assert "Bored" in panel.card.toPlainText() and panel.knew_button.isVisible()
        shoot(win, "cards")
        QTest.mouseClick(panel.knew_button, Qt.MouseButton.LeftButton)
        assert "Why a _____ watch?" in panel.card.toPlainText()  # a cloze of the note
        QTest.mouseClick(panel.show_button, Qt.MouseButton.LeftButton)
        QTest.mouseClick(panel.again_button, Qt.MouseButton.LeftButton)
        assert f"{every - 1} due of {every}" in panel.feed.status.text()  # not known: again
        target = tmp_path / "alice"
        panel.export_to(target)
        qtbot.waitUntil(lambda: "exported" in panel.feed.status.text(), timeout=10000)
        assert f"{every} cards exported to alice.apkg" in panel.feed.status.text()
        with zipfile.ZipFile(tmp_path / "alice.apkg") as z:
            z.extract("collection.anki2", tmp_path)
        count = sqlite3.connect(tmp_path / "collection.anki2").execute("SELECT count(*) FROM cards")
        assert count.fetchone()[0] == every


def test_previously_when_coming_back_after_days(
    library: Library, books_dir: Path, qtbot: Any, real_font: str
) -> None:
    import datetime as dt

    from core.companions.store import CompanionStore

    with window_at(library, books_dir, qtbot, 33) as (win, book):
        panel = win.reader.side.panel("Story so far")
        store = CompanionStore(library.db)
        qtbot.waitUntil(lambda: store.item(book.id, "seen", "", 1) is not None, timeout=10000)
        assert not panel.previously  # just opened: nothing to recall
        away = dt.datetime.now(dt.UTC) - dt.timedelta(days=4)
        store.put_item(book.id, "seen", "", 1, {"at": away.isoformat()})
        win.reader.close_book()  # as on the next start of Margin, days later
        win.panes.set_side_visible(False)
        win.open_book(book.id)
        qtbot.waitUntil(lambda: "Previously…" in panel.view.toPlainText(), timeout=10000)
        assert win.reader.side.isVisible() and win.reader.side.current_name() == "Story so far"
        assert "You stopped on page 33" in panel.view.toPlainText()
        shoot(win, "previously")


def test_define_lookup_becomes_a_card_and_who_is_this_button(
    qtbot: Any,
    fake_anthropic: Any,
    claude_window: tuple[Any, Any],
) -> None:
    from tests.fakes.anthropic_server import Reply

    win, _book = claude_window
    fake_anthropic.responder = lambda body: Reply.text("A tall pipe smoked through water.")
    view = text_view(win.reader)
    win.reader.go_to_page(30)
    cursor = view.document().find("hookah", view.textCursor())
    assert not cursor.isNull()
    view.setTextCursor(cursor)
    view.setFocus()
    qtbot.waitUntil(win.reader.selection_bar.isVisible, timeout=5000)
    QTest.mouseClick(win.reader.selection_bar.buttons["define"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "tall pipe" in win.chat.transcript_text(), timeout=15000)
    qtbot.waitUntil(lambda: not win.chat.answering(), timeout=10000)
    click_tab(win, "Cards")
    panel = win.reader.side.panel("Cards")
    qtbot.waitUntil(lambda: bool(panel.queue) and panel.queue[0].source == "define", timeout=10000)
    assert panel.card.toPlainText().strip() == "hookah"
    QTest.mouseClick(panel.show_button, Qt.MouseButton.LeftButton)
    assert "A tall pipe smoked through water." in panel.card.toPlainText()
    # the selection bar's "Who is this?" opens the name's X-Ray entry
    cursor = view.document().find("Caterpillar", view.textCursor())
    view.setTextCursor(cursor)
    qtbot.waitUntil(win.reader.selection_bar.isVisible, timeout=5000)
    QTest.mouseClick(win.reader.selection_bar.buttons["whois"], Qt.MouseButton.LeftButton)
    xray = win.reader.side.panel("X-Ray")
    assert win.reader.side.current_name() == "X-Ray"
    qtbot.waitUntil(
        lambda: (
            xray.list.currentItem() is not None
            and xray.list.currentItem().text().startswith("Caterpillar")
        ),
        timeout=10000,
    )

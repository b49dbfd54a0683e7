"""The window as Orca hears it, for the Orca test: runs the real app and scripts what a reader
does (ask, fail, Read to here, open a footnote), printing ``STEP name time`` before each so
the test can tell which utterance belongs to which step; prints ``done`` at the end. The
answers come from the fake Anthropic server, started here on the loopback."""

from __future__ import annotations

import asyncio
import datetime
import os
import sys
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import Qt, QUrl
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from core.app import Margin
from core.paths import resolve_paths
from tests.fakes.anthropic_server import FakeAnthropic, Reply

SHIFT_CTRL = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier


def step(name: str) -> None:
    print("STEP", name, datetime.datetime.now().strftime("%H:%M:%S.%f"), flush=True)


class _Env:
    """What ``connect_claude`` needs of pytest's monkeypatch."""

    def setenv(self, name: str, value: str) -> None:
        os.environ[name] = value


async def until(test: Any, seconds: float = 30.0) -> None:
    """Wait until ``test()`` holds (polled: the window's state has no event for it)."""
    end = asyncio.get_running_loop().time() + seconds
    while not test() and asyncio.get_running_loop().time() < end:  # noqa: ASYNC110
        await asyncio.sleep(0.1)


async def settle(least: float = 1.0, quiet: float = 1.2, most: float = 15.0) -> None:
    """Wait until Orca has said what it will (its debug file quiet for ``quiet`` seconds):
    on a loaded machine Orca lags, and a step taken before it catches up makes it drop the
    focus events and notices it has not reached (the focus has gone on, the notice replaced;
    at load 30 Orca was seen silent for more than 0.7 s mid-step). A fixed pause without the
    log."""
    out = os.environ.get("OUT")
    if not out:
        await asyncio.sleep(float(os.environ.get("ORCA_PAUSE", "2.5")))
        return
    log = Path(out) / "orca.log"
    loop = asyncio.get_running_loop()
    await asyncio.sleep(least)
    start = changed = loop.time()
    size = -1
    while loop.time() - changed < quiet and loop.time() - start < most:
        now_size = log.stat().st_size if log.exists() else 0
        if now_size != size:
            size, changed = now_size, loop.time()
        await asyncio.sleep(0.1)


async def script(window: Any, fake: FakeAnthropic, alice: Path, notes: Path) -> None:
    from core.books.importer import import_book
    from tests.desktop.conftest import connect_claude

    book = import_book(window.library, alice).book
    window.library.set_position(book.id, 20)
    window.books.refresh_library()
    window.open_book(book.id, 20)
    connect_claude(window, fake, _Env())  # type: ignore[arg-type]
    window.activateWindow()
    await settle()
    chat = window.chat
    chat.input.setFocus()
    await settle()

    step("answer")
    fake.add(
        Reply.text(
            "The Rabbit is late for the Duchess. He hurries on.",
            delay_before=1.0,
            tokens_per_second=2,
        )
    )
    chat.ask("Why does the rabbit hurry?")
    await until(lambda: not chat.live)
    await settle()

    step("held_back")
    leak = "Later, at the trial, the Knave of Hearts is accused of stealing the tarts."
    fake.add(Reply.text(f"Alice grows and shrinks in the hall. {leak} She cries a pool of tears."))
    chat.ask("What happens?")
    await until(lambda: not chat.live)
    await settle()

    step("failure")
    fake.add(Reply.error(401, "authentication_error", "invalid x-api-key"))
    chat.ask("Hello?")
    await until(lambda: not chat.live)
    await settle()

    step("read_to_here")
    window.reader.go_to_page(25)
    await asyncio.sleep(0.5)
    window.reader.mark_read_to_here()
    await settle()

    await companions(window, book.id)

    step("reading_settings")  # Ctrl+Shift+A, then Down changes the layout
    QTest.keyClick(window, Qt.Key.Key_A, SHIFT_CTRL)
    await settle()
    QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Down)
    await settle()
    print("layout", window.reader.typography.layout, flush=True)
    QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Escape)
    window.activateWindow()  # (what a window manager does when a window closes; Xvfb has none)
    await settle()

    step("footnote")
    smith = import_book(window.library, notes).book
    window.open_book(smith.id, 1)
    await settle()
    flow = window.reader.host.view
    href = first_note_link(flow)
    flow.setFocus()
    await settle()
    flow.anchorClicked.emit(QUrl(href))
    await settle()
    step("footnote_tab")  # Tab leaves the note for the page
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    await settle()
    step("footnote_go")  # Enter on "Go to the note" goes there
    flow.anchorClicked.emit(QUrl(href))
    await settle()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    await settle()
    print("page", window.reader.page, flush=True)
    step("done")
    print("done", flush=True)


async def companions(window: Any, book_id: int) -> None:
    """An X-Ray entry and a flashcard, each focused as Tab would reach it."""
    window.library.add_highlight(book_id, 3, "Alice was beginning to get very tired")
    side = window.reader.side
    window.panes.set_side_visible(True)
    step("xray")
    side.show_panel("X-Ray")
    xray = side.panel("X-Ray")
    await until(lambda: xray.made is not None)
    await settle()
    rabbit = next(
        i for i in range(xray.list.count()) if xray.list.item(i).text().startswith("Rabbit")
    )
    xray.list.setCurrentRow(rabbit)
    xray.list.setFocus()
    await settle()
    step("xray_entry")  # Tab from the list: the entry, read with its text
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    await settle()
    step("xray_pages")  # Tab from the entry: one stop for all its pages
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    await settle()
    print("xray_pages", type(QApplication.focusWidget()).__name__, flush=True)
    step("flashcard")
    side.show_panel("Cards")
    cards = side.panel("Cards")
    await until(lambda: cards.total > 0)
    cards.card.setFocus()
    await settle()
    window.panes.set_side_visible(False)
    window.reader.focus_book()


def first_note_link(flow: Any) -> str:
    doc = flow.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor() and fmt.anchorHref().startswith("page:") and "#" in fmt.anchorHref():
                return str(fmt.anchorHref())
            it += 1
        block = block.next()
    raise SystemExit("no note link on the page")


def main() -> None:
    app = QApplication(["margin"])
    app.setApplicationName("margin")
    from desktop.window.main_window import MainWindow

    margin = Margin.open(resolve_paths().ensure())
    window = MainWindow(margin, restore=False)
    window.resize(1200, 760)
    window.show()
    fake = FakeAnthropic()
    fake.start()
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    task = loop.create_task(script(window, fake, Path(sys.argv[1]), Path(sys.argv[2])))
    task.add_done_callback(lambda t: (t.exception() and print(repr(t.exception())), app.quit()))
    with loop:
        loop.run_until_complete(task)
    fake.close()


if __name__ == "__main__":
    main()

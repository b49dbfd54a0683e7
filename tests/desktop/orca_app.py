"""The window as Orca hears it, for the Orca test: runs the real app and scripts what a reader
does (ask, fail, Read to here, open a footnote), printing ``STEP name time`` before each so
the test can tell which utterance belongs to which step; prints ``done`` at the end. The
answers come from the fake Anthropic server, started here on the loopback."""

from __future__ import annotations

import asyncio
import datetime
import importlib
import os
import sys
import threading
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QApplication

from core.app import Margin
from core.paths import resolve_paths
from desktop.reader.picture_text import MARK
from tests.fakes.anthropic_server import FakeAnthropic, Reply


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


class _Heard:
    """What Orca has said so far (its debug file, read on from where it was last read)."""

    offset = 0
    text = ""

    @classmethod
    def read(cls) -> int:
        """Read what Orca wrote since; returns the debug file's size."""
        log = Path(os.environ["OUT"]) / "orca.log"
        size = log.stat().st_size if log.exists() else 0
        if size > cls.offset:
            with log.open("rb") as f:
                f.seek(cls.offset)
                chunk = f.read(size - cls.offset)
            cls.offset = size
            for line in chunk.decode("utf-8", "replace").splitlines():
                if " - SPEECH OUTPUT: " in line:
                    cls.text += line.split(" - SPEECH OUTPUT: ", 1)[1] + "\n"
        return size


async def hear(*phrases: str, quiet: float = 0.5, most: float = 20.0) -> None:
    """Wait until Orca has said each of ``phrases`` (since the last wait), then until its
    debug file is quiet for ``quiet`` seconds: on a loaded machine Orca lags, and a step taken
    before it catches up makes it drop the focus events and notices it has not reached (at
    load 30 Orca was seen silent for 0.7 s mid-step: waiting for what it must say, not for a
    pause, is both faster and safer). A fixed pause without the log."""
    if not os.environ.get("OUT"):
        await asyncio.sleep(float(os.environ.get("ORCA_PAUSE", "2.5")))
        return
    loop = asyncio.get_running_loop()
    start = changed = loop.time()
    size = _Heard.read()
    while loop.time() - start < most:
        await asyncio.sleep(0.1)
        now = _Heard.read()
        if now != size:
            size, changed = now, loop.time()
        said = all(p in _Heard.text for p in phrases)
        if said and loop.time() - changed >= quiet:
            break
    _Heard.text = ""


KEYSYMS = {"F7": 0xFFC4, "Down": 0xFF54, "Tab": 0xFF09, "Return": 0xFF0D, "Escape": 0xFF1B}
CONTROL, SHIFT = 4, 1  # X modifier masks


def key(name: str, modifiers: int = 0) -> None:
    """Press and release a key as the keyboard does (AT-SPI's XTEST), so that Orca hears the
    key as a reader's and speaks what it moved over. (A key sent inside Qt reaches Orca
    without its key name: Orca 43's key listener fails on it, and Qt waits for its answer.)"""
    import ctypes

    atspi = ctypes.CDLL("libatspi.so.0")
    atspi.atspi_generate_keyboard_event.argtypes = [
        ctypes.c_long,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_void_p,
    ]
    if not getattr(key, "ready", False):
        atspi.atspi_init()
        key.ready = True  # type: ignore[attr-defined]
    if modifiers:
        atspi.atspi_generate_keyboard_event(modifiers, None, 5, None)  # ATSPI_KEY_LOCKMODIFIERS
    keysym = KEYSYMS.get(name) or ord(name)
    atspi.atspi_generate_keyboard_event(keysym, None, 3, None)  # ATSPI_KEY_SYM: press, release
    if modifiers:
        atspi.atspi_generate_keyboard_event(modifiers, None, 6, None)  # ATSPI_KEY_UNLOCKMODIFIERS


async def script(window: Any, fake: FakeAnthropic, alice: Path, notes: Path) -> None:
    from core.books.importer import import_book
    from tests.desktop.conftest import connect_claude

    book = import_book(window.library, alice).book
    window.library.set_position(book.id, 20)
    window.books.refresh_library()
    window.activateWindow()
    await hear("Filter books")  # the window's first focus
    step("library")  # the library's list of books, its first book current
    books = window.library_panel.view
    books.setCurrentIndex(books.model().index(0, 0))
    books.setFocus()
    await hear("Books", "Alice")
    step("page")  # the book opens: the page and the line at the caret
    window.open_book(book.id, 20)
    await hear("Book page")
    connect_claude(window, fake, _Env())  # type: ignore[arg-type]
    chat = window.chat
    step("question")
    chat.input.setFocus()
    await hear("Question")

    step("answer")
    fake.add(
        Reply.text(
            "The Rabbit is late for the Duchess. He hurries on.",
            delay_before=1.0,
            tokens_per_second=5,
        )
    )
    chat.ask("Why does the rabbit hurry?")
    await until(lambda: not chat.live)
    await hear("Answer ready")

    step("held_back")
    leak = "Later, at the trial, the Knave of Hearts is accused of stealing the tarts."
    fake.add(Reply.text(f"Alice grows and shrinks in the hall. {leak} She cries a pool of tears."))
    chat.ask("What happens?")
    await until(lambda: not chat.live)
    await hear("held back", "Answer ready")

    step("failure")
    fake.add(Reply.error(401, "authentication_error", "invalid x-api-key"))
    chat.ask("Hello?")
    await until(lambda: not chat.live)
    await hear("The answer failed")

    step("read_to_here")
    window.reader.go_to_page(25)
    await asyncio.sleep(0.3)
    window.reader.mark_read_to_here()
    await hear("Read to here")

    await companions(window, book.id)

    step("reading_settings")  # Ctrl+Shift+A, then Down changes the layout
    key("a", CONTROL | SHIFT)
    await hear("Layout combo box")
    key("Down")
    await hear("Scroll")
    print("layout", window.reader.typography.layout, flush=True)
    key("Escape")
    window.activateWindow()  # (what a window manager does when a window closes; Xvfb has none)
    await hear("Book page")

    step("picture")  # an imprint's logo: its line is silent, the next reads its alt text
    smith = import_book(window.library, notes).book
    window.open_book(smith.id, 1)
    flow = window.reader.host.view
    await hear("Book page")
    key("F7")  # caret browsing, then Down from the picture's line to its alt text
    await hear("Caret browsing on")
    cursor = flow.textCursor()
    cursor.setPosition(flow.document().find(MARK).selectionStart())
    flow.setTextCursor(cursor)
    key("Down")
    await hear("Illustration")
    key("F7")
    await hear("Caret browsing off")

    step("footnote")
    href = first_note_link(flow)
    flow.anchorClicked.emit(QUrl(href))
    await hear("Go to the note")
    step("footnote_tab")  # Tab leaves the note for the page
    key("Tab")
    await hear("Book page")
    step("footnote_go")  # Enter on "Go to the note" goes there
    flow.anchorClicked.emit(QUrl(href))
    await hear("Go to the note")
    key("Return")
    await hear("return")
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
    rabbit = next(
        i for i in range(xray.list.count()) if xray.list.item(i).text().startswith("Rabbit")
    )
    xray.list.setCurrentRow(rabbit)
    xray.list.setFocus()
    await hear("Rabbit, name")
    step("xray_entry")  # Tab from the list: the entry, read with its text
    key("Tab")
    await hear("Rabbit: name")
    step("xray_pages")  # Tab from the entry: one stop for all its pages
    key("Tab")
    await hear("pages with Rabbit")
    print("xray_pages", type(QApplication.focusWidget()).__name__, flush=True)
    step("flashcard")
    side.show_panel("Cards")
    cards = side.panel("Cards")
    await until(lambda: cards.total > 0)
    cards.card.setFocus()
    await hear("Flashcard")
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
    # the SDK, loaded while Orca reads the library and the page (the first question loads
    # it otherwise: 10 s at load 25, on the answer's step)
    threading.Thread(target=importlib.import_module, args=("anthropic",), daemon=True).start()
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

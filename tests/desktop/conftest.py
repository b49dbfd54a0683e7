"""Qt test plumbing shared by every desktop test.

One qasync loop for the whole session (qasync 0.28 can crash when many loops are created and
closed with PySide6 >= 6.8), created with ``already_running=True`` so that ``qtbot.wait`` and
``qtbot.waitUntil`` drive coroutines and async slots. It counts as "running" only during a
desktop test, so tests elsewhere can use ``asyncio.run``. Every test gets a real ``Library`` in
its temp MARGIN_HOME; tests assert that the fonts they measure (DejaVu, pinned in
tests/conftest.py) are installed, because Qt silently draws empty boxes without one.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication, QMessageBox

from core.app import Margin
from core.paths import resolve_paths
from core.store.library import Library
from tests.conftest import TEST_FONTS


@pytest.fixture(scope="session")
def qt_loop(qapp: QApplication) -> Iterator[Any]:
    loop = qasync.QEventLoop(qapp, already_running=True)
    # plain threads for asyncio's own executor work (DNS lookups): qasync's default QThreads
    # would still be running when the interpreter exits and abort the process
    executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="test-default")
    loop.set_default_executor(executor)
    asyncio.events._set_running_loop(None)
    yield loop
    executor.shutdown(wait=True)


@pytest.fixture(autouse=True)
def _loop_for_every_desktop_test(qt_loop: Any) -> Iterator[Any]:
    hooks = sys.get_asyncgen_hooks()
    # qasync does not install asyncio's async-generator hooks; without them an unfinished
    # generator (an HTTP stream a Stop left) is finalised by the garbage collector off the loop
    sys.set_asyncgen_hooks(
        firstiter=qt_loop._asyncgen_firstiter_hook, finalizer=qt_loop._asyncgen_finalizer_hook
    )
    asyncio.set_event_loop(qt_loop)
    asyncio.events._set_running_loop(qt_loop)
    yield qt_loop
    asyncio.events._set_running_loop(None)
    sys.set_asyncgen_hooks(*hooks)


@pytest.fixture(autouse=True)
def _no_modal_dialogs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Modal dialogs would block a headless run; tests that need one patch it themselves."""
    for name in ("critical", "warning", "information"):
        monkeypatch.setattr(
            QMessageBox, name, staticmethod(lambda *a, **k: QMessageBox.StandardButton.Ok)
        )
    monkeypatch.setattr(
        QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Yes)
    )


@pytest.fixture
def heard() -> Iterator[list[tuple[str, Any]]]:
    """The announcements the window sends a screen reader, as (text, politeness)."""
    from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent

    from desktop import accessibility

    said: list[tuple[str, Any]] = []

    def listen(event: QAccessibleAnnouncementEvent) -> None:
        assert event.type() == QAccessible.Event.Announcement
        said.append((event.message(), event.politeness()))

    accessibility.listeners.append(listen)
    yield said
    accessibility.listeners.remove(listen)


@pytest.fixture(scope="session")
def real_font(qapp: QApplication) -> str:
    """The serif the tests measure: the suite shows Qt only the DejaVu fonts (tests/conftest.py),
    so the figures do not depend on what else the machine has."""
    families = set(QFontDatabase.families())
    missing = [f for f in TEST_FONTS if f not in families]
    assert not missing, (
        f"the fonts the tests measure are not installed ({', '.join(missing)}): "
        "install fonts-dejavu-core (.ci/system-packages does); without fonts Qt draws empty boxes"
    )
    assert not [f for f in families if "Liberation" in f], "only the pinned fonts are seen"
    return "DejaVu Serif"


@pytest.fixture
def app(margin_home: object) -> Iterator[Margin]:
    """The app object the window is built on, in the test's temp MARGIN_HOME."""
    margin = Margin.open(resolve_paths().ensure())
    yield margin
    margin.close()


@pytest.fixture
def library(app: Margin) -> Library:
    return app.library


def open_window(app: Margin, qtbot: Any, size: tuple[int, int] | None = None) -> Any:
    """A shown main window that asks no modal questions ("headless"), sized when asked."""
    from desktop.window.main_window import MainWindow

    win = MainWindow(app, restore=False)
    qtbot.addWidget(win)
    win.reader.setProperty("headless", True)
    if size is not None:
        win.resize(*size)
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.fixture
def window(app: Margin, qtbot: Any, real_font: str) -> Iterator[Any]:
    """``open_window`` at its default size, closed after the test."""
    win = open_window(app, qtbot)
    yield win
    close_window(qtbot, win)


def close_window(qtbot: Any, window: Any) -> None:
    """Close a MainWindow and finish its background tasks while the test's loop still runs."""
    window.close()
    task = asyncio.ensure_future(window.shutdown())
    qtbot.waitUntil(task.done, timeout=10000)


def connect_claude(
    window: Any,
    fake: Any,
    monkeypatch: pytest.MonkeyPatch,
    key: str = "sk-ant-desktop-test-KEY-42",
    *,
    max_retries: int = 1,
    **settings: Any,
) -> Any:
    """``window`` answering with "Claude" from the fake server ``fake`` (a key in the
    environment, quick retries; ``settings`` override the provider's), its chat pane told so."""
    from core.agent.service import AgentService, make_provider
    from core.settings import Settings

    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    values: dict[str, Any] = {"provider": "anthropic", "base_url": fake.url, "model": "claude-test"}
    window.app.agent = AgentService(
        window.library,
        window.paths,
        Settings(**(values | settings)),
        provider_factory=lambda s, k: make_provider(s, k, max_retries=max_retries, timeout=5.0),
        retry_delay=0.01,
        conversations=window.app.conversations,
        search=window.app.search,
        executor=window.app.executor,
    )
    window.chat._update_banner()
    return window


def open_alice(
    window: Any, books_dir: Path, page: int = 5, read_to: int = 0, *, side: bool = False
) -> int:
    """Alice imported and open in ``window`` at ``page`` (read up to ``read_to`` when given,
    the side panel shown when ``side``)."""
    path = books_dir / "alice_in_wonderland.epub"
    return open_book_file(window, path, page, read_to, side=side)


def open_book_file(
    window: Any, path: Path, page: int = 1, read_to: int = 0, *, side: bool = False
) -> int:
    """The book at ``path`` imported and open in ``window``, as ``open_alice``: its id."""
    from core.books.importer import import_book

    book = import_book(window.library, path).book
    if read_to:
        window.library.set_position(book.id, read_to)
    window.books.refresh_library()
    window.open_book(book.id, page)
    if side:
        window.panes.set_side_visible(True)
    QApplication.processEvents()
    return int(book.id)


def run_until(qtbot: Any, coro: Any, timeout: float = 20.0) -> Any:
    """Run ``coro`` on the test's loop until it is done (Qt events flowing): its result."""
    task = asyncio.ensure_future(coro)
    qtbot.waitUntil(task.done, timeout=int(timeout * 1000))
    return task.result()

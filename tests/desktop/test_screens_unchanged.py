"""The main screens (eleven), photographed at a fixed size with the suite's pinned DejaVu fonts.

A restructuring must not change a pixel: shoot the screens before (``MARGIN_SCREENS=DIR``
keeps the PNGs there), then after with ``MARGIN_SCREENS_BASELINE=DIR``, and every screen is
compared pixel by pixel with the one of the same name. Without a baseline the test still checks
that each screen was drawn (many colours, not an empty box), so the suite runs it as a smoke
test::

    MARGIN_SCREENS=/tmp/before pytest tests/desktop/test_screens_unchanged.py
    MARGIN_SCREENS=/tmp/after MARGIN_SCREENS_BASELINE=/tmp/before pytest tests/desktop/...
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from core.agent.types import Usage
from core.books.importer import import_book
from core.store.library import Library
from tests.desktop.conftest import close_window, open_window, run_until
from tests.support.answers import store_answer

SIZE = (1280, 800)


def _settle(qtbot: Any, window: Any) -> None:
    """Everything drawn: pages painted, background work landed, no passing status message."""
    for _ in range(3):
        qtbot.wait(150)
        QApplication.processEvents()
    if window.reading_view_built() and window.reader.book is not None:
        run_until(qtbot, window.reader.wait_drawn())
    window.statusBar().clearMessage()
    QApplication.processEvents()


def _grab(widget: QWidget) -> QImage:
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _colours(image: QImage) -> int:
    seen = set()
    for y in range(0, image.height(), 7):
        for x in range(0, image.width(), 7):
            seen.add(image.pixel(x, y))
    return len(seen)


def _differences(a: QImage, b: QImage) -> int:
    if a.size() != b.size():
        return -1
    if bytes(a.constBits()) == bytes(b.constBits()):
        return 0
    return sum(a.pixel(x, y) != b.pixel(x, y) for y in range(a.height()) for x in range(a.width()))


def test_the_main_screens_are_drawn_and_unchanged(
    app: Any,
    library: Library,
    books_dir: Path,
    pdf_dir: Path,
    qtbot: Any,
    real_font: str,
    tmp_path: Path,
) -> None:
    QApplication.setCursorFlashTime(0)  # a blinking caret would differ from shot to shot
    out = Path(os.environ.get("MARGIN_SCREENS") or tmp_path / "screens")
    out.mkdir(parents=True, exist_ok=True)
    baseline = os.environ.get("MARGIN_SCREENS_BASELINE")
    alice = import_book(library, books_dir / "alice_in_wonderland.epub").book
    text = import_book(library, books_dir / "metamorphosis.txt").book
    pdf = import_book(library, pdf_dir / "pdflatex-outline.pdf").book
    library.set_position(alice.id, 33)
    conversation = app.conversations.create(alice.id)
    store_answer(
        app.conversations,
        int(conversation.id),
        "The White Rabbit hurries past Alice, checking his watch [p. 5].",
        question="Who is the White Rabbit?",
        usage=Usage(1000, 200),
        provider="anthropic",
        model="claude-sonnet-4-6",
    )
    win = open_window(app, qtbot, SIZE)
    shots: dict[str, QImage] = {}

    def shoot(name: str, widget: QWidget | None = None) -> None:
        """The screen once it stops changing (covers and companions load on workers)."""
        _settle(qtbot, win)
        shot = _grab(widget or win)
        for _ in range(20):
            _settle(qtbot, win)
            again = _grab(widget or win)
            if _differences(shot, again) == 0:
                break
            shot = again
        shots[name] = shot

    def side(name: str, then: Callable[[], object] | None = None) -> None:
        win.panes.set_side_visible(True)
        assert win.reader.side.show_panel(name), name
        if then is not None:
            then()
        panel = win.reader.side.currentWidget()

        def loaded() -> bool:  # a companion reads the book on a worker first
            return not any(
                label.text().startswith("Reading the pages") for label in panel.findChildren(QLabel)
            )

        qtbot.waitUntil(loaded, timeout=10000)
        shoot(f"side_{name.lower().replace(' ', '_')}")

    try:
        win.books.refresh_library()
        qtbot.waitUntil(lambda: win.library_panel.isVisible(), timeout=5000)
        shoot("01_library")
        win.open_book(text.id, 2)
        shoot("02_text_book")
        win.open_book(pdf.id, 1)
        shoot("03_pdf_book")
        win.open_book(alice.id, 5)
        shoot("04_epub_book")
        win.chat.select_conversation(int(conversation.id))
        qtbot.waitUntil(lambda: "White Rabbit hurries" in win.chat.transcript_text(), timeout=5000)
        shoot("05_chat_answer")
        side("Contents")
        win.reader.find_box.setText("rabbit")
        side("Find", win.reader.run_find)
        library.add_highlight(alice.id, 5, "White Rabbit", note="late")
        win.reader.refresh_highlights()
        side("Highlights")
        side("X-Ray")
        side("Cards")
        win.panels.open_settings()
        dialog = win.panels.settings_dialog
        qtbot.waitExposed(dialog)
        for label in dialog.findChildren(QLabel):  # the test's temp folder differs every run
            label.setText(label.text().replace(str(app.paths.data), "MARGIN_HOME"))
        shoot("11_settings_dialog", dialog)
        dialog.close()
    finally:
        close_window(qtbot, win)
    assert len(shots) == 11
    for name, image in shots.items():
        image.save(str(out / f"{name}.png"))
        assert _colours(image) > 8, f"{name} looks empty"
    if baseline:
        changed = {
            name: _differences(
                image,
                QImage(str(Path(baseline) / f"{name}.png")).convertToFormat(
                    QImage.Format.Format_RGB32
                ),
            )
            for name, image in shots.items()
        }
        assert not any(changed.values()), f"pixels changed (-1: another size): {changed}"

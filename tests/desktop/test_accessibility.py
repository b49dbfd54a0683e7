"""The window as a screen reader and a keyboard-only reader meet it: the tab chain, names,
labels, mnemonics, shortcuts, the caret and alt text, read through Qt's accessibility
interfaces (what AT-SPI, UI Automation and NSAccessibility are built on). Announcements and
contrast have their own files."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QKeySequence, QTextCursor
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QMenu, QWidget

from core.books.importer import import_book
from desktop.reader.picture_text import MARK, PICTURE
from tests.desktop.conftest import open_alice as open_book_at

# Alice at page 3 with the side panel shown, unless a test says otherwise
open_alice = partial(open_book_at, page=3, side=True)


def reachable(window: QWidget) -> list[QWidget]:
    """Every control a mouse can reach that Tab should too: shown, enabled, taking tab focus
    (the widget its focus goes to when it has a focus proxy)."""
    out = []
    for w in window.findChildren(QWidget):
        if not (w.isVisible() and w.isEnabled() and w.focusPolicy() & Qt.FocusPolicy.TabFocus):
            continue
        if w.focusProxy() is not None or isinstance(w.parentWidget(), QAbstractSpinBox):
            continue  # its proxy (or its spin box) is the control
        out.append(w)
    return out


def control(widget: QWidget) -> QWidget:
    """The control a focused widget belongs to (a spin box's line edit → the spin box)."""
    parent = widget.parentWidget()
    return parent if isinstance(parent, QAbstractSpinBox | QComboBox) else widget


def focused() -> QWidget:
    widget = QApplication.focusWidget()
    assert widget is not None, "focus left the window"
    return widget


def tab_walk(qtbot: Any, start: QWidget, key: Qt.Key = Qt.Key.Key_Tab) -> list[QWidget]:
    """Focus ``start`` and press ``key`` until focus comes back: the widgets focused, in order."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    seen: list[QWidget] = [focused()]
    for _ in range(300):
        qtbot.keyClick(focused(), key)
        now = focused()
        if now is seen[0]:
            return seen
        if now is seen[-1]:  # Tab goes through a text's links first (a citation, a note)
            continue
        assert now not in seen, f"focus loops before the start: {[type(w).__name__ for w in seen]}"
        seen.append(now)
    raise AssertionError("Tab never came back to where it started")


def _menus(window: Any) -> list[QMenu]:
    return [a.menu() for a in window.menuBar().actions() if a.menu() is not None]


def _mnemonic(text: str) -> str:
    i = text.replace("&&", "").find("&")
    return text.replace("&&", "")[i + 1].lower() if i >= 0 else ""


def test_tab_and_shift_tab_leave_the_question_box(window: Any, books_dir: Path, qtbot: Any) -> None:
    open_alice(window, books_dir)
    box = window.chat.input
    box.setFocus()
    box.setPlainText("Who is the White Rabbit?")
    for key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
        box.setFocus()
        qtbot.keyClick(box, key)
        assert QApplication.focusWidget() is not box
    assert "\t" not in box.toPlainText()


def test_tab_chain_reaches_every_control_in_window_order(
    window: Any, books_dir: Path, qtbot: Any
) -> None:
    open_alice(window, books_dir)
    chain = tab_walk(qtbot, window.library_button)
    reached = {control(w) for w in chain}
    missing = [
        f"{type(w).__name__} {w.accessibleName()!r}"
        for w in reachable(window)
        if control(w) not in reached
    ]
    assert not missing, f"Tab never reaches: {missing}"
    order = [control(w) for w in chain]
    reader, chat = window.reader, window.chat
    toolbar = [i for i, w in enumerate(order) if reader.toolbar.isAncestorOf(w)]
    side = [i for i, w in enumerate(order) if reader.side.column.isAncestorOf(w)]
    page = order.index(reader.view)
    in_chat = [i for i, w in enumerate(order) if chat.isAncestorOf(w)]
    # toolbar, then the side panel, the page, the chat; the question before Send
    assert max(toolbar) < min(side) < max(side) < page < min(in_chat)
    tabs = reader.side.rows.buttons
    assert any(b in order for b in tabs), "the side panel's tabs are reachable"
    assert order.index(chat.input) < order.index(chat.send_button)
    assert order.index(window.library_button) < order.index(reader.prev_button)
    # Shift+Tab walks the same chain backwards
    back = tab_walk(qtbot, window.library_button, Qt.Key.Key_Backtab)
    backwards = [control(w) for w in back[1:]]
    # (going through the page's links can turn back to the first page: Previous is then off)
    assert backwards == [w for w in reversed(order[1:]) if w.isEnabled()]


def test_every_focusable_control_is_named_and_combos_have_labels(
    window: Any, books_dir: Path
) -> None:
    open_alice(window, books_dir)
    window.chat.spoilers.setCurrentIndex(1)  # the page box shows too
    QApplication.processEvents()
    unnamed, by_value = [], []
    for w in reachable(window):
        target = control(w)
        iface = QAccessible.queryAccessibleInterface(target)
        assert iface is not None and iface.isValid()
        name = iface.text(QAccessible.Text.Name).strip()
        if not name:
            unnamed.append(f"{type(target).__name__} in {type(target.parentWidget()).__name__}")
        if isinstance(target, QComboBox):
            labels = iface.relations(QAccessible.RelationFlag.Label)
            label_names = [other.text(QAccessible.Text.Name) for other, _ in labels]
            if not any(n and n != target.currentText() for n in label_names):
                by_value.append(f"{target.accessibleName() or target.currentText()}")
    assert not unnamed, f"unnamed controls: {unnamed}"
    assert not by_value, f"combo boxes without a label of their own: {by_value}"


def test_dialog_controls_are_named_and_labelled(window: Any, books_dir: Path, qtbot: Any) -> None:
    from desktop.reader.reading_settings import ReadingSettings
    from desktop.window.settings_dialog import SettingsDialog

    open_alice(window, books_dir)
    for dialog in (SettingsDialog(window.paths, window), ReadingSettings(window)):
        qtbot.addWidget(dialog)
        dialog.show()
        QApplication.processEvents()
        for w in reachable(dialog):
            target = control(w)
            iface = QAccessible.queryAccessibleInterface(target)
            assert iface.text(QAccessible.Text.Name).strip(), f"unnamed {type(target).__name__}"
            if isinstance(target, QComboBox):
                labels = iface.relations(QAccessible.RelationFlag.Label)
                assert labels, f"{target.accessibleName()!r} in {type(dialog).__name__}"
        dialog.close()


def test_status_texts_are_read_as_they_change(window: Any, books_dir: Path) -> None:
    open_alice(window, books_dir)
    footer = window.reader.footer
    name = QAccessible.queryAccessibleInterface(footer).text(QAccessible.Text.Name)
    assert "p. 3 of" in name and "<b>" not in name
    window.action_next.trigger()
    name = QAccessible.queryAccessibleInterface(footer).text(QAccessible.Text.Name)
    assert "p. 4 of" in name
    assert footer.accessibleDescription() == "Reading progress"
    cost = window.chat.header.cost
    cost.setText("1,234 tokens · $0.01")
    assert QAccessible.queryAccessibleInterface(cost).text(QAccessible.Text.Name) == cost.text()
    status = window.chat.status
    status.setText("Answer copied.")
    assert QAccessible.queryAccessibleInterface(status).text(QAccessible.Text.Name) == (
        "Answer copied."
    )


def test_mnemonics_are_unique_in_every_menu(window: Any) -> None:
    bar = [_mnemonic(a.text()) for a in window.menuBar().actions()]
    assert len(bar) == len(set(bar)) and all(bar)
    for menu in _menus(window):
        letters: dict[str, str] = {}
        for action in menu.actions():
            if action.isSeparator() or action.text().endswith("(arrow)"):
                continue
            letter = _mnemonic(action.text())
            assert letter, f"{action.text()!r} in {menu.title()} has no mnemonic"
            assert letter not in letters, (
                f"{action.text()!r} and {letters[letter]!r} share {letter!r} in {menu.title()}"
            )
            letters[letter] = action.text()


def test_common_actions_have_unique_shortcuts(window: Any) -> None:
    for name in (
        "theme_system",
        "theme_light",
        "theme_sepia",
        "theme_dark",
        "theme_contrast",
        "reading",
        "finished",
        "export",
    ):
        assert not getattr(window, f"action_{name}").shortcut().isEmpty(), name
    keys: dict[str, str] = {}
    actions = list(window.actions()) + list(window.reader.actions())
    for action in actions:
        key = action.shortcut().toString(QKeySequence.SequenceFormat.PortableText)
        if not key or action.text().endswith("(arrow)"):
            continue
        assert key not in keys, f"{key} is both {keys[key]!r} and {action.text()!r}"
        keys[key] = action.text()
    window.action_theme_contrast.trigger()
    assert window.theme == "contrast"


def test_the_caret_follows_the_page_on_screen(window: Any, books_dir: Path, qtbot: Any) -> None:
    open_alice(window, books_dir, page=5)
    view = window.reader.view
    view.setFocus()
    qtbot.waitUntil(lambda: view.visible_range()[1] > view.visible_range()[0])
    text = QAccessible.queryAccessibleInterface(view).textInterface()

    def caret_on_top_line() -> int:
        first, last = view.visible_range()
        position = view.textCursor().position()
        assert first <= position <= last, "the caret is on the page shown, not pages ahead"
        assert 0 <= view.cursorRect().top() < 2 * view.flow.line_height(), (
            "at the top of the screen"
        )
        assert text.cursorPosition() == position, "screen readers see the same caret"
        return int(position)

    opened = caret_on_top_line()
    qtbot.keyClick(view, Qt.Key.Key_PageDown)  # a screen turn
    turned = caret_on_top_line()
    assert turned > opened
    window.action_next.trigger()  # a page turn: the caret at the top of the new page
    page, offset = view.flow.page_offset(caret_on_top_line())
    assert page == window.reader.page and offset < 5
    qtbot.keyClick(view, Qt.Key.Key_PageUp)
    assert caret_on_top_line() < view.visible_range()[1]
    # a selection stays where the reader made it
    cursor = view.textCursor()
    cursor.movePosition(cursor.MoveOperation.Right, cursor.MoveMode.KeepAnchor, 5)
    view.setTextCursor(cursor)
    selected = cursor.selectedText()
    qtbot.keyClick(view, Qt.Key.Key_PageDown)
    assert view.textCursor().selectedText() == selected


def test_an_images_alt_text_is_in_the_pages_accessible_text(
    window: Any, tmp_path: Path, qtbot: Any
) -> None:
    from PySide6.QtGui import QColor, QImage

    from tests.core.books.epubgen import make_epub

    logo = QImage(120, 60, QImage.Format.Format_RGB32)
    logo.fill(QColor("#336699"))
    assert logo.save(str(tmp_path / "logo.png"))
    path = make_epub(
        tmp_path / "imprint.epub",
        [
            (
                "Imprint",
                '<p>This ebook was produced for Standard Ebooks.</p><p><img alt="The Standard '
                'Ebooks logo." src="logo.png"/></p><p>It is in the public domain.</p>',
            ),
            ("Chapter", "<p>" + "Words of the first chapter. " * 40 + "</p>"),
        ],
        extra_manifest='<item id="logo" href="logo.png" media-type="image/png"/>',
        extra_files={"OEBPS/logo.png": (tmp_path / "logo.png").read_bytes()},
    )
    book = import_book(window.library, path).book
    assert "[Illustration: The Standard Ebooks logo.]" in window.library.page(book.id, 1).text
    window.books.refresh_library()
    window.open_book(book.id, 1)
    view = window.reader.view
    text = QAccessible.queryAccessibleInterface(view).textInterface()
    spoken = text.text(0, text.characterCount())
    assert "[Illustration: The Standard Ebooks logo.]" in spoken, "what a screen reader reads"
    assert "\ufffc" not in spoken, "Orca speaks U+FFFC as is ([OBJ])"
    # the picture is still shown, where it was: painted on its line (picture_text)
    mark = view.document().find(MARK)
    assert not mark.isNull() and mark.charFormat().property(PICTURE).endswith("logo.png")
    shot = view.viewport().grab().toImage().scaled(view.viewport().size())
    blue = sum(
        shot.pixelColor(x, y).name() == "#336699"
        for x in range(0, shot.width(), 4)
        for y in range(0, shot.height(), 4)
    )
    assert blue >= 120 * 60 / 16 * 0.9, "the logo is painted, whole"
    # copying the passage gives the alt text, not the invisible mark
    copy = QTextCursor(view.document())
    copy.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(copy)
    view.copy()
    copied = QApplication.clipboard().text()
    assert "[Illustration: The Standard Ebooks logo.]" in copied and MARK not in copied
    # the words stay out of sight: no taller than a pixel or two on the page
    cursor = view.document().find("[Illustration:")
    assert view.document().documentLayout().blockBoundingRect(cursor.block()).height() <= 3

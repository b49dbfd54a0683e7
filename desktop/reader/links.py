"""Links on a book page, as a reader expects them (KOReader's ``readerlink``).

- A link inside the book (``page:N``) jumps there; the reader remembers the jump for Back and
  a jump is not reading (``core/reading.py``). The page flow does that itself.
- A note reference (``page:N#DOC#ID``, made by ``core.books.pages.resolve_note_links``) opens
  a pop-up with the note's text, and a "Go to the note" button that jumps to it. The pop-up is
  a child of the page (so in the accessibility tree, not a separate popup window): its button
  takes the focus, the note is spoken, Enter goes to the note, Tab, Shift+Tab or Esc leave it
  and give the focus back to the page.
- A web or e-mail link asks first, then hands the address to the system; when nothing opens
  it, the reader is told so (with the address to copy).
- ``data:`` images the book carries inline are decoded here for the view.
- A sound or video of the book (``media:/PATH``, made by ``core.books.htmlextras``) is copied
  out of the book to a private temporary folder; a sound plays at the foot of the page
  (``media_player.py``), a video (or a sound Qt cannot play) is handed to the system's player;
  when nothing plays it, the reader is told so.
"""

from __future__ import annotations

import atexit
import html
import logging
import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, QTimer, QUrl
from PySide6.QtGui import QCursor, QDesktopServices, QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QFrame,
    QLabel,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from selectolax.lexbor import LexborHTMLParser

from desktop.accessibility import plain_text
from desktop.reader.book_images import data_url_bytes, decode_image

if TYPE_CHECKING:
    from desktop.reader.text_view import TextView

log = logging.getLogger(__name__)
NOTE_BLOCKS = ("p", "li", "div", "aside", "section", "blockquote", "dd", "td")
MAX_NOTE_CHARS = 1500


def data_image(url: QUrl) -> QImage | None:
    """An inline ``data:`` picture, decoded once for the page's fitting and drawing."""
    return _data_image(url.toString(QUrl.ComponentFormattingOption.FullyDecoded))


@lru_cache(maxsize=32)
def _data_image(url: str) -> QImage | None:
    data = data_url_bytes(url)
    return decode_image(data) if data else None


def note_html(page_html: str, name: str) -> str:
    """The note anchored at ``name`` on a page: the HTML of the block holding the anchor
    (its number and text), "" when it is not there."""
    tree = LexborHTMLParser(page_html)
    for anchor in tree.css("a[name]"):
        if anchor.attributes.get("name") != name:
            continue
        node = anchor.parent
        while node is not None and node.tag not in NOTE_BLOCKS and node.tag != "body":
            node = node.parent
        if node is None or node.tag == "body":
            node = anchor.parent
        text = node.text(separator="") if node is not None else ""
        if len(text) > MAX_NOTE_CHARS:
            return html.escape(text[:MAX_NOTE_CHARS].rsplit(" ", 1)[0] + " …")
        return node.html or "" if node is not None else ""
    return ""


class NotePopup(QFrame):
    """The note beside its reference: its text, and a button to where it stands."""

    LEAVE = (Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab)

    def __init__(self, view: TextView, page: int, note: str) -> None:
        super().__init__(view)
        self.setObjectName("notePopup")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Note")
        self.page = page
        self.book_view = view
        theme = view.theme  # the page's colours, so the note reads as part of the page
        self.setStyleSheet(
            f"#notePopup {{ background: {theme.background}; border: 1px solid {theme.link}; }}"
            f"#notePopup QLabel {{ color: {theme.text}; background: transparent; }}"
            f"#notePopup QPushButton {{ color: {theme.link}; background: transparent;"
            " border: none; text-decoration: underline; padding: 4px; }"
            f"#notePopup QPushButton:focus {{ border: 1px solid {theme.link}; }}"
        )
        layout = QVBoxLayout(self)
        self.text = QLabel(note, self)
        self.text.setMinimumWidth(280)
        font = view.document().defaultFont()  # the page's face, a little smaller
        font.setPointSizeF(max(8.0, font.pointSizeF() * 0.9))
        self.text.setFont(font)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setMaximumWidth(460)
        spoken = plain_text(html.unescape(_tags.sub(" ", note)).replace("↩", ""))
        self.spoken = re.sub(r"\s+([,.;:!?])", r"\1", spoken)  # (a tag's gap before a comma)
        self.text.setAccessibleName(f"Note: {self.spoken}")
        self.go = QPushButton("Go to the note", self)
        self.go.setCursor(Qt.CursorShape.PointingHandCursor)
        self.go.setAutoDefault(True)  # Enter presses it too (as in a dialog)
        self.go.clicked.connect(self._go)
        self.go.installEventFilter(self)
        layout.addWidget(self.text)
        layout.addWidget(self.go, 0, Qt.AlignmentFlag.AlignRight)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() in self.LEAVE:
                self.leave()
                return True
        elif event.type() == QEvent.Type.FocusOut:  # a click elsewhere closes it
            QTimer.singleShot(0, self._close_unless_focused)
        return super().eventFilter(watched, event)

    def _close_unless_focused(self) -> None:
        if self.isVisible() and not self.isAncestorOf(self.focusWidget() or self):
            self.close()

    def leave(self) -> None:
        """Close the note and give the focus back to the page."""
        self.close()
        self.book_view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _go(self, _checked: bool = False) -> None:
        self.close()
        view = self.book_view
        view.setFocus(Qt.FocusReason.OtherFocusReason)
        view.pageLinkOpened.emit(self.page)
        # the caret on the note, so that a screen reader reads from there, not from the top
        # of the page (a caret moved after the focus is read only when Orca lags behind)
        words = re.sub(r"^\d+\.\s*", "", self.spoken)[:40]
        starts = dict(zip(view.flow.loaded, view.flow.starts, strict=False))
        found = view.document().find(words, starts.get(self.page, 0)) if words else None
        if found is not None and not found.isNull():
            cursor = QTextCursor(found)
            cursor.setPosition(found.selectionStart())
            view.setTextCursor(cursor)

    def show_at(self, where: QPoint) -> None:
        """Show it at ``where`` (global), kept inside the page; its button takes the focus."""
        self.adjustSize()
        here = self.book_view.mapFromGlobal(where)
        x = max(0, min(here.x(), self.book_view.width() - self.width()))
        y = max(0, min(here.y(), self.book_view.height() - self.height()))
        self.move(x, y)
        self.show()
        self.raise_()
        self.go.setFocus(Qt.FocusReason.PopupFocusReason)


_tags = re.compile(r"<[^>]+>")


def _below_link(view: TextView, href: str) -> QPoint | None:
    """Just below the link ``href`` on screen (where the reader clicked), in global
    coordinates; None when it is not in the loaded text."""
    doc = view.document()
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.charFormat().isAnchor() and frag.charFormat().anchorHref() == href:
                cursor = QTextCursor(doc)
                cursor.setPosition(frag.position())
                rect = view.cursorRect(cursor)
                return view.viewport().mapToGlobal(QPoint(rect.left(), rect.bottom() + 4))
            it += 1
        block = block.next()
    return None


def open_note(view: TextView, page: int, name: str, href: str = "") -> NotePopup | None:
    """Show the note ``name`` (on ``page``) in a pop-up at the mouse; None when the note
    cannot be found there (the caller jumps to the page instead)."""
    loader = view.flow.loader
    if loader is None or not (0 < page <= view.flow.page_count):
        return None
    content = loader(page)
    note = note_html(content.html or "", name)
    if not note:
        return None
    for old in view.findChildren(NotePopup):  # one note at a time
        old.close()
        old.setParent(None)
        old.deleteLater()
    popup = NotePopup(view, page, note)
    popup.show_at(_below_link(view, href) or QCursor.pos() + QPoint(8, 12))
    return popup


def ask_to_open(parent: QWidget, url: QUrl, opened: object = None) -> QMessageBox:
    """Ask before a web or e-mail link leaves the book; open it on Yes, and say so plainly
    when the system has nothing to open it with. Not modal to the app: returns the box."""
    target = url.toString()
    what = "your e-mail program" if url.scheme() == "mailto" else "your web browser"
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Open link?",
        f"This link leaves the book and opens in {what}:\n\n{target}",
        QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)

    def done(result: int) -> None:
        if result != QMessageBox.StandardButton.Open:
            return
        if callable(opened):
            opened(target)
        if not QDesktopServices.openUrl(url):
            log.info("no program opened a link from a book")
            fail = QMessageBox(
                QMessageBox.Icon.Warning,
                "Link not opened",
                f"No program on this computer could open the link. You can copy it:\n\n{target}",
                QMessageBox.StandardButton.Ok,
                parent,
            )
            fail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            parent._link_failed = fail  # type: ignore[attr-defined]
            fail.open()

    box.finished.connect(done)
    parent._link_box = box  # type: ignore[attr-defined]
    box.open()
    return box


def follow_link(view: TextView, url: QUrl) -> bool:
    """Handle a clicked link; False leaves it to the page flow (a plain page jump)."""
    if url.scheme() == "page" and url.hasFragment():
        number = url.path()
        name = url.fragment(QUrl.ComponentFormattingOption.FullyDecoded)
        return number.isdigit() and open_note(view, int(number), name, url.toString()) is not None
    if url.scheme() in ("http", "https", "mailto"):
        ask_to_open(view, url, view.linkOpened.emit)
        return True
    if url.scheme() == "media":
        open_media(view, view.flow.book_file, url.path())
        return True
    return False


_media_folder: Path | None = None


def open_media(parent: QWidget, book: Path | None, name: str) -> bool:
    """Play a sound or video file of the book: on the page when Qt Multimedia can, else with
    the system's player (a copy in a private temporary folder, removed when Margin quits);
    say so plainly when that cannot be done."""
    global _media_folder
    from core.books.epubzip import read_resource
    from core.errors import MarginError

    try:
        if book is None:
            raise FileNotFoundError(name)
        data = read_resource(book, name)
        if _media_folder is None:
            _media_folder = Path(tempfile.mkdtemp(prefix="margin-media-"))
            atexit.register(shutil.rmtree, _media_folder, ignore_errors=True)
        copy = _media_folder / PurePosixPath(name).name
        copy.write_bytes(data)
    except (MarginError, OSError) as exc:
        log.info("a sound or video of the book was not opened: %s", exc)
        _not_played(
            parent,
            name,
            "Margin could not read it from the book's file (it may be damaged or moved).",
        )
        return False
    from desktop.reader.media_player import play_in_place

    def system_player() -> None:
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(copy))):
            _not_played(
                parent,
                name,
                "No program on this computer could play it. Install a media player and try again.",
            )

    page = parent.viewport() if isinstance(parent, QAbstractScrollArea) else parent
    if PurePosixPath(name).suffix.lower() not in VIDEO_FILES and play_in_place(
        page, copy, copy.name, system_player
    ):
        return True
    system_player()
    return True


VIDEO_FILES = {".m4v", ".webm", ".mkv", ".mov", ".ogv", ".avi"}


def _not_played(parent: QWidget, name: str, problem: str) -> None:
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "Not played",
        f"The sound or video “{PurePosixPath(name).name}” was not played. {problem}",
        QMessageBox.StandardButton.Ok,
        parent,
    )
    parent._media_failed = box  # type: ignore[attr-defined]
    box.open()

"""What the Highlights panel does to a highlight, through the reader it belongs to: change
its note, colour or style, delete it, copy it with its citation, export a chapter's or the
book's highlights as Markdown. Each change redraws the page and tells the window."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from core.errors import MarginError
from core.export.highlights import citation, highlights_markdown
from core.export.markdown import export_file_name, write_text_atomic
from core.store.highlight_style import set_style
from core.store.library import HighlightRecord

if TYPE_CHECKING:
    from desktop.reader.reader import Reader

log = logging.getLogger(__name__)


def chapter_title(reader: Reader | None, page: int) -> str:
    """The title of the contents entry ``page`` is in ("" when the book has no contents)."""
    if reader is None:
        return ""
    item = reader.side.contents.chapter_at(page)
    return item.text(0) if item is not None else ""


def _changed(reader: Reader) -> None:
    reader.refresh_highlights()


def update(
    reader: Reader,
    highlight_id: int,
    *,
    note: str | None = None,
    colour: str | None = None,
    style: str | None = None,
) -> None:
    if note is not None or colour is not None:
        reader.library.update_highlight(highlight_id, note=note, colour=colour)
    if style is not None:
        set_style(highlight_id, style)
    _changed(reader)


def delete(reader: Reader, highlight_id: int) -> None:
    reader.library.delete_highlight(highlight_id)
    _changed(reader)


def cited(reader: Reader, h: HighlightRecord) -> str:
    """“…” — *Title*, p. 40 (the page as the book prints it, when it does)."""
    title = reader.book.title if reader.book is not None else ""
    return citation(h.text, title, reader.labels.short(h.page))


def copy_with_citation(reader: Reader, h: HighlightRecord) -> str:
    """Put the highlight and its citation on the clipboard as text (Markdown: the title in
    asterisks, which Markdown editors show in italics); returns the text. (Plain text only: a
    QMimeData with HTML handed to the clipboard crashed the interpreter on exit here.)"""
    text = cited(reader, h)
    QApplication.clipboard().setText(text)
    return text


def export(
    parent: QWidget, reader: Reader, highlights: Sequence[HighlightRecord], *, chapter: bool
) -> str:
    """Ask where, then save this chapter's (``chapter``) or all the book's highlights as
    Markdown: the sentence to show ("" when cancelled)."""
    book = reader.book
    if book is None:
        return ""
    scope = chapter_title(reader, reader.page) if chapter else ""
    chosen = [h for h in highlights if not chapter or chapter_title(reader, h.page) == scope]
    what = f"highlights, {scope}" if scope else "highlights"
    name, _ = QFileDialog.getSaveFileName(
        parent,
        "Export this chapter's highlights" if chapter else "Export all highlights",
        str(Path.home() / export_file_name(book.title, what)),
        "Markdown (*.md)",
    )
    if not name:
        return ""
    text = highlights_markdown(
        book,
        chosen,
        page_label=reader.labels.short,
        chapter_of=lambda page: chapter_title(reader, page),
        scope=scope if chapter else "",
    )
    try:
        write_text_atomic(Path(name), text)
    except (MarginError, OSError) as exc:
        log.warning("highlights not exported to %s: %s", name, exc)
        message = f"The highlights could not be saved to {name}: {exc}"
    else:
        message = f"Saved {len(chosen)} highlights to {name}."
    window = reader.window()
    status = getattr(window, "statusBar", None)
    if callable(status):
        status().showMessage(message, 6000)
    return message

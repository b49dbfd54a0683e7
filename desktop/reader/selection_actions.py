"""What the reader can do with a selection: the bar beside it, the context menu, the quick
actions (Ask, Explain, Define, Summarize, Translate: an ``AskRequest`` for the chat) and
highlights (saved at once; a note is written from the highlight's bar).

A module of the reader: given in its constructor the widget it shows over, the views'
selection (``SelectionViews``: the view host's signals and views), the reading place
(``ReadingPlace``: the book, the page, Back, Read to here), the library, the events (it
publishes ``SelectionChanged``) and where a question goes. It reaches into nothing else."""

from __future__ import annotations

import locale
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QPoint
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from core.prompts import load_prompt
from core.store.highlight_style import HIGHLIGHT_STYLES, STYLE_NAMES, set_style
from core.store.library import HIGHLIGHT_COLOURS
from desktop.accessibility import announce
from desktop.events import Events, SelectionChanged
from desktop.highlights.margin_marks import stored_offset
from desktop.reader.selection_bar import ACTIONS, SelectionBar
from desktop.requests import AskRequest

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from core.store.library import BookInfo, Library
    from desktop.highlights.mark_views import SelectionViews

Selection = tuple[int, str, object]  # page, text, anchor


class ReadingPlace(Protocol):
    """What the selection's actions read of the reading host: the book and the page, and
    the moves the context menu offers."""

    @property
    def book(self) -> BookInfo | None: ...

    @property
    def page(self) -> int: ...

    def can_go_back(self) -> bool: ...

    def go_back(self) -> None: ...

    def mark_read_to_here(self) -> None: ...

    def refresh_highlights(self) -> None: ...


def reader_language() -> str:
    code = (locale.getlocale()[0] or "en").split("_")[0]
    names = {
        "en": "English",
        "fr": "French",
        "de": "German",
        "es": "Spanish",
        "it": "Italian",
        "pt": "Portuguese",
        "nl": "Dutch",
        "ja": "Japanese",
        "zh": "Chinese",
    }
    return names.get(code, "English")


class SelectionActions(QObject):
    def __init__(
        self,
        widget: QWidget,
        views: SelectionViews,
        place: ReadingPlace,
        library: Library,
        events: Events,
        ask: Callable[[AskRequest], object],
    ) -> None:
        super().__init__(widget)
        self.widget = widget  # the bar shows over it; menus and dialogs belong to it
        self.views, self.place, self.library = views, place, library
        self.events, self.ask = events, ask
        self.bar = SelectionBar(widget)
        self.bar.actionChosen.connect(self.act)
        self.pending: Selection | None = None  # a PDF selection (the canvas keeps no text)
        views.textSelectionChanged.connect(self._text_selection_changed)
        views.pdfSelected.connect(self._pdf_selected)
        views.selectionCleared.connect(self._cleared)
        views.contextMenuAt.connect(lambda pos: self.build_context_menu().exec(pos))

    def selection(self) -> Selection | None:
        """(page, text, anchor) of the current selection, if any."""
        text_view = self.views.text_view()
        if text_view is not None:
            text = text_view.marks.selected_text()
            if not text:
                return None
            page = text_view.marks.selection_page() or self.place.page
            return (page, text, text_view.marks.selection_anchor())
        return self.pending

    def _publish(self, page: int, text: str) -> None:
        book = self.place.book
        if book is not None:
            self.events.publish(SelectionChanged(book.id, page, text))

    def _cleared(self) -> None:
        self.bar.hide()
        self._publish(self.place.page, "")

    def _text_selection_changed(self) -> None:
        view = self.views.text_view()
        if view is None:
            return
        text = view.marks.selected_text()
        if text:
            viewport = view.viewport()
            rect = view.cursorRect()
            y = min(max(rect.bottom(), 0), viewport.height() - self.bar.height() - 40)
            x = min(max(rect.center().x(), 0), viewport.width())
            self.bar.show_at(viewport.mapTo(self.widget, QPoint(x, y)))
        else:
            self.bar.hide()
        self._publish((view.marks.selection_page() if text else 0) or self.place.page, text)

    def _pdf_selected(self, page: int, text: str, polys: object) -> None:
        self.pending = (page, text, {"polys": polys})
        pdf = self.views.pdf_view()
        if pdf is not None:
            pos = pdf.canvas.mapFromGlobal(self.widget.cursor().pos())
            viewport = pdf.viewport()
            inside = viewport.mapFrom(pdf.canvas, pos)
            inside.setY(min(max(inside.y(), 0), viewport.height() - 60))
            inside.setX(min(max(inside.x(), 0), viewport.width()))
            self.bar.show_at(viewport.mapTo(self.widget, inside))
        self._publish(page, text)

    def build_context_menu(self) -> QMenu:
        reader = self.place
        menu = QMenu(self.widget)
        has = self.selection() is not None
        for key, label in ACTIONS:
            action = QAction(label, menu)
            action.setEnabled(has)
            action.triggered.connect(lambda _=False, k=key: self.act(k))
            menu.addAction(action)
        menu.addSeparator()
        hl = QAction("Highlight", menu)
        hl.setEnabled(has)
        hl.triggered.connect(lambda: self.act("highlight"))
        menu.addAction(hl)
        for style in ("underline", "strike"):  # the other looks of a highlight
            look = QAction(STYLE_NAMES[style], menu)
            look.setEnabled(has)
            look.triggered.connect(lambda _=False, st=style: self.act(f"highlight:yellow:{st}"))
            menu.addAction(look)
        menu.addSeparator()
        if reader.can_go_back():
            back = QAction("Back", menu)
            back.triggered.connect(reader.go_back)
            menu.addAction(back)
        read_to = QAction("Read to here (I have read up to here)", menu)
        read_to.setEnabled(reader.book is not None)
        read_to.triggered.connect(reader.mark_read_to_here)
        menu.addAction(read_to)
        return menu

    def act(self, action: str = "ask") -> bool:
        """Run a quick action or a highlight on the selection; False when there is none."""
        sel = self.selection()
        book = self.place.book
        if sel is None or book is None:
            return False
        page, text, anchor = sel
        self.bar.hide()
        if action == "highlight" or action.startswith("highlight:"):
            if isinstance(anchor, dict) and "polys" in anchor and "start" not in anchor:
                # a PDF selection: its quote is the occurrence selected, not the page's first
                anchor = {**anchor, "stored_start": stored_offset(self.views, page, anchor)}
            # "highlight", "highlight:pink" or "highlight:pink:underline"
            _, colour, style = ([*action.split(":"), "", ""])[:3]
            return self.save_highlight(page, text, anchor, colour or "yellow", style=style)
        prompt = ""
        if action != "ask":
            prompt = load_prompt(
                f"actions/{action}",
                selection=text,
                page=str(page),
                book_title=book.title,
                language=reader_language(),
            )
        near = stored_offset(self.views, page, anchor)  # the thread is about this occurrence
        self.ask(AskRequest(book.id, page, text, action, prompt, near))
        return True

    def save_highlight(
        self,
        page: int,
        text: str,
        anchor: object = None,
        colour: str = "yellow",
        note: str | None = None,
        style: str = "",
    ) -> bool:
        """Save a highlight (no question asked: a note is written from the highlight's own
        bar, when the reader wants one); False when no book is open."""
        book, widget = self.place.book, self.widget
        if book is None:
            return False
        saved = self.library.add_highlight(
            book.id,
            page,
            text,
            note=note or "",
            colour=colour if colour in HIGHLIGHT_COLOURS else "yellow",
            anchor=anchor,
        )
        if style in HIGHLIGHT_STYLES and style != "highlight":
            set_style(saved.id, style)
        self.place.refresh_highlights()
        self.views.clear_selection()
        announce(widget, "Highlight saved." if not note else "Highlight and note saved.")
        return True

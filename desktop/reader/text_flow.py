"""The document of a reflowable book's text view: a small window of neighbouring stored
pages, loaded and dropped at either end as the reader scrolls (each page is a few kilobytes:
appending one lays out only that page), with where each page starts — so a character offset
inside a stored page becomes a place on screen and back (``page_offset``, ``pos``).

Nothing is ever fetched from the network and nothing runs: ``loadResource`` serves only
``book:`` images from inside the EPUB and returns nothing for any other URL; links open in the
system browser only when clicked, and only for http(s) and mailto.
"""

from __future__ import annotations

import html as htmllib
import logging
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QPoint, QSize, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QImage, QTextCursor, QTextDocument

from core.books.model import PageContent
from core.books.svgimages import inline_images
from core.errors import MarginError
from desktop.reader.book_fonts import apply_book_fonts
from desktop.reader.book_images import decode_image, placeholder
from desktop.reader.line_pitch import fix_line_pitch
from desktop.reader.links import data_image, follow_link
from desktop.reader.picture_text import unobject, with_alt_text
from desktop.reader.ruby_paint import make_room, parenthesise
from desktop.reader.typography import Typography, book_font
from desktop.theme import page_css

if TYPE_CHECKING:
    from desktop.reader.text_view import TextView

log = logging.getLogger("margin.reader")

KEEP_PAGES = 12  # loaded pages before the far end is dropped
AHEAD_SCREENS = 2.0  # content kept ready below and above the screen


# Standard Ebooks put a word joiner before each dash; fonts without it (Liberation, Georgia)
# make Qt fall back to a taller font for the whole line: a zero-width joiner, which every
# shaper knows, keeps the word and its dash together without that
WORD_JOINER, JOINER = "\u2060", "\u200d"
_STYLE = re.compile(r' style="([^"]*)"')
_RUBY_TITLE = re.compile(r'class="ruby" title="[^"]*"')  # core.books.htmlextras.ruby_element
_VERTICAL = re.compile(r"margin(-top|-bottom)?: [^;\"]+;? ?")
_INDENT = re.compile(r"text-indent: [^;\"]+;? ?")
_EM = re.compile(r"(text-indent|margin[a-z-]*): ([^;\"]+)")


def book_styles(body: str, typography: Typography, font_size: float) -> str:
    """``body`` with the book's styles made ready for Qt (which reads a text-indent in px
    only), or without them when the reader does not want them. A paragraph spacing or
    indent the reader chose (not the default) wins over the book's."""
    if not typography.book_styles:
        return _STYLE.sub("", body)
    px = font_size * 96 / 72
    default = Typography()
    if typography.paragraph_spacing != default.paragraph_spacing:
        body = _VERTICAL.sub("", body)
    if typography.paragraph_indent != default.paragraph_indent:
        body = _INDENT.sub("", body)

    def lengths(match: re.Match[str]) -> str:
        values = []
        for value in match.group(2).split():
            if value.endswith("em"):
                value = f"{round(float(value[:-2]) * px)}px"
            values.append(value)
        return f"{match.group(1)}: {' '.join(values)}"

    return _STYLE.sub(lambda m: f' style="{_EM.sub(lengths, m.group(1))}"', body)


class PageFlow:
    """The document window of one text view (``view.flow``): which stored pages are loaded,
    where each starts, and the marked words' positions as pages come and go."""

    blockedRequests = 0  # remote resources refused (tests read it)

    def __init__(self, view: TextView, book_file: Path | None, fmt: str) -> None:
        self.view = view
        self.book_file = book_file
        self.format = fmt
        self.ruby = False  # a page with ruby readings was laid out: paint them
        self.pictures = False  # a picture was taken out of the text (picture_text): paint it
        self.page: PageContent | None = None  # the page at the top of the screen
        self.page_count = 0
        self.loader: Callable[[int], PageContent] | None = None
        self.loaded: list[int] = []  # stored page numbers in the document, in order
        self.starts: list[int] = []  # document position where each loaded page begins
        # the marked words' document positions: kept right as pages are added and dropped
        self.mark_range: tuple[int, int] | None = None
        self.images: dict[str, QSize] = {}

    @property
    def typography(self) -> Typography:  # what the book's fonts read (book_fonts.FontedFlow)
        return self.view.typography

    # resources and links ---------------------------------------------------------------

    def resource(self, url: QUrl) -> object:
        """What the view's ``loadResource`` returns: the book's own images, nothing else."""
        if url.scheme() == "book" and self.book_file is not None and self.format == "epub":
            image = self._image(url)
            return image if image is not None else QByteArray()
        if url.scheme() == "data":  # an image the book carries inline (links.py)
            return data_image(url) or QByteArray()
        PageFlow.blockedRequests += 1
        return QByteArray()  # no network, no local files outside the book

    def _image(self, url: QUrl) -> QImage | None:
        from core.books.epub import read_resource

        assert self.book_file is not None
        try:
            data = read_resource(self.book_file, url.path())
        except MarginError as exc:
            log.info("image not shown: %s", exc.message)
            return None
        if b"<svg" in data[:4096]:  # an SVG page's own pictures, read from the book
            data = inline_images(data, url.path(), self._book_file_bytes)
        image = decode_image(data) or placeholder(data)  # SVG at a bounded size too
        if image is None:
            return None
        self.images[url.toString()] = image.size()
        return image

    def _book_file_bytes(self, name: str) -> bytes | None:
        from core.books.epub import read_resource

        assert self.book_file is not None
        try:
            return read_resource(self.book_file, name)
        except MarginError:
            return None

    def follow(self, url: QUrl) -> None:
        """A clicked link (the view's ``anchorClicked``)."""
        if follow_link(self.view, url):  # links.py: notes, jumps, asking before a browser
            return
        if url.scheme() == "page":  # core.books.pages.resolve_note_links
            number = url.path()
            if number.isdigit() and int(number) > 0:
                self.view.pageLinkOpened.emit(int(number))
            return
        if url.scheme() in ("http", "https", "mailto"):
            self.view.linkOpened.emit(url.toString())
            QDesktopServices.openUrl(url)

    # source and rendering ----------------------------------------------------------------

    def set_source(self, loader: Callable[[int], PageContent], page_count: int) -> None:
        """Where stored pages come from (``loader(number)``) and how many there are."""
        self.loader = loader
        self.page_count = page_count

    def reset(self, page: int) -> None:
        doc = self.view.document()
        apply_book_fonts(self)  # book_fonts.py: the book's embedded faces, when its styles are on
        # an image's line must not get the text's 140% line height (a gap under each picture)
        doc.setDefaultStyleSheet(
            page_css(self.view.theme, self.view.font_size, self.view.typography)
            + " p.image { line-height: 100%; text-indent: 0; }"
        )
        typography = replace(self.view.typography, font_size=self.view.font_size)
        doc.setDefaultFont(book_font(typography, doc.defaultFont()))
        option = doc.defaultTextOption()
        option.setAlignment(
            Qt.AlignmentFlag.AlignJustify if typography.justify else Qt.AlignmentFlag.AlignLeft
        )
        doc.setDefaultTextOption(option)
        doc.clear()
        self.view.pager.apply_geometry()
        self.loaded = []
        self.starts = []
        first = max(1, page - 1)
        for number in range(first, min(self.page_count, page + 1) + 1):
            self._append(number)

    def _page_html(self, number: int) -> str:
        assert self.loader is not None
        content = self.loader(number)
        body = content.html
        if not body:
            body = "".join(
                f"<p>{htmllib.escape(p)}</p>" for p in content.text.split("\n\n") if p.strip()
            )
        if "<img" in body or "<IMG" in body:
            body = with_alt_text(self._fit_images(body))
        if WORD_JOINER in body:  # one character for one: offsets stay; lines keep their height
            body = body.replace(WORD_JOINER, JOINER)
        if ' style="' in body:  # the book's own styles (core.books.bookcss), or none
            body = book_styles(body, self.view.typography, self.view.font_size)
        if 'class="ruby"' in body:  # readings over or after their base (ruby_paint), or none
            if self.view.typography.ruby == "off":
                body = _RUBY_TITLE.sub('class="ruby"', body)
            elif self.view.typography.ruby == "parentheses":
                body = parenthesise(body, self.view.document().defaultFont())
                self.ruby = True
            else:
                body = make_room(body)
                self.ruby = True
        return body or "<p></p>"

    def _fit_images(self, body: str) -> str:
        """Give every image the column's width at most (height follows, keeping the shape)."""
        column = max(50, self.view.pager.column_width() - 2 * self.view.pager.side_margin - 8)

        def size(match: re.Match[str]) -> str:
            tag = match.group(0)
            src = re.search(r'src="([^"]+)"', tag)
            if src is None or "width=" in tag:
                return tag
            url = QUrl(htmllib.unescape(src.group(1)))
            natural = self.images.get(url.toString())
            if natural is None and url.scheme() == "book" and self.book_file is not None:
                self._image(url)
                natural = self.images.get(url.toString())
            elif natural is None and url.scheme() == "data":  # links.py (decoded once)
                inline = data_image(url)
                natural = inline.size() if inline is not None else None
            if natural is None or natural.width() <= column:
                return tag
            return tag.replace("<img", f'<img width="{column}"', 1)

        return re.sub(r"<img\b[^>]*>", size, body, flags=re.IGNORECASE)

    def _append(self, number: int) -> None:
        doc = self.view.document()
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if self.loaded:
            cursor.insertBlock()
        self.starts.append(cursor.position())
        self.loaded.append(number)
        body = self._page_html(number)
        cursor.insertHtml(body)
        self._first_block_format(self.starts[-1], body)
        fix_line_pitch(doc, self.starts[-1], self.end_position(), self._pitch())
        if "<img" in body:  # after the pitch, which leaves a picture's paragraph as it is
            self.pictures |= unobject(doc, self.starts[-1], cursor.position()) > 0

    def _first_block_format(self, position: int, body: str) -> None:
        """Give a page's first block its own format: inserted HTML merges its first block
        into the block at the cursor, which keeps that block's format (the page before's
        last block: a right-aligned signature, say) and loses a heading's or the book's
        alignment and margins."""
        if not body.startswith(("<h", "<p", "<blockquote", "<hr")):
            return  # lists, tables, preformatted text: as Qt inserts them
        sample = QTextDocument()
        sample.setDefaultStyleSheet(self.view.document().defaultStyleSheet())
        sample.setDefaultFont(self.view.document().defaultFont())
        sample.setHtml(body.split("\n", 1)[0])
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(position)
        cursor.setBlockFormat(sample.begin().blockFormat())

    def _prepend(self, number: int) -> int:
        """Insert page ``number`` before the first loaded one; returns the height added."""
        doc = self.view.document()
        layout = doc.documentLayout()
        before = layout.blockBoundingRect(doc.findBlock(self.starts[0])).top()
        length_before = doc.characterCount()
        cursor = QTextCursor(doc)
        cursor.insertBlock()
        cursor.setPosition(0)
        body = self._page_html(number)
        cursor.insertHtml(body)
        self._first_block_format(0, body)
        added = doc.characterCount() - length_before
        fix_line_pitch(doc, 0, added, self._pitch())
        if "<img" in body:
            self.pictures |= unobject(doc, 0, cursor.position()) > 0
        self.starts = [0] + [s + added for s in self.starts]
        self.loaded.insert(0, number)
        if self.mark_range is not None:
            self.mark_range = (self.mark_range[0] + added, self.mark_range[1] + added)
        after = layout.blockBoundingRect(doc.findBlock(self.starts[1])).top()
        return int(after - before)

    def _drop_first(self) -> int:
        doc = self.view.document()
        layout = doc.documentLayout()
        before = layout.blockBoundingRect(doc.findBlock(self.starts[1])).top()
        cursor = QTextCursor(doc)
        cursor.setPosition(self.starts[1], QTextCursor.MoveMode.KeepAnchor)
        removed = self.starts[1]
        cursor.removeSelectedText()
        self.loaded.pop(0)
        self.starts = [s - removed for s in self.starts[1:]]
        if self.mark_range is not None:
            self.mark_range = (self.mark_range[0] - removed, self.mark_range[1] - removed)
            if self.mark_range[0] < 0:
                self.mark_range = None
        after = layout.blockBoundingRect(doc.findBlock(0)).top()
        return int(before - after)

    def _drop_last(self) -> None:
        doc = self.view.document()
        cursor = QTextCursor(doc)
        cursor.setPosition(self.starts[-1] - 1)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        self.loaded.pop()
        if self.mark_range is not None and self.mark_range[1] > self.starts[-1]:
            self.mark_range = None
        self.starts.pop()

    def y_of(self, position: int) -> float:
        doc = self.view.document()
        block = doc.findBlock(position)
        rect = doc.documentLayout().blockBoundingRect(block)
        layout = block.layout()
        line = layout.lineForTextPosition(position - block.position()) if layout else None
        if line is not None and line.isValid():
            return float(rect.top() + line.y())
        return float(rect.top())

    def fill(self) -> None:
        """Keep a couple of screens of text ready on both sides of the screen."""
        bar = self.view.verticalScrollBar()
        screen = max(1, self.view.viewport().height())
        doc = self.view.document()
        guard = 0
        # the paged view's room under the text (for its last screen) is not text
        tail = max(0.0, doc.rootFrame().frameFormat().bottomMargin() - doc.documentMargin())
        while self.loaded and guard < 40:
            guard += 1
            height = doc.documentLayout().documentSize().height() - tail
            value = bar.value()
            if height - (value + screen) < AHEAD_SCREENS * screen and (
                self.loaded[-1] < self.page_count
            ):
                self._append(self.loaded[-1] + 1)
                continue
            if value < AHEAD_SCREENS * screen and self.loaded[0] > 1:
                added = self._prepend(self.loaded[0] - 1)
                bar.setValue(value + added)
                continue
            break
        while len(self.loaded) > KEEP_PAGES:
            value = bar.value()
            top_index = self._index_at(value)
            if top_index > len(self.loaded) // 2 and (
                self.y_of(self.starts[1]) < value - AHEAD_SCREENS * screen
            ):
                removed = self._drop_first()
                bar.setValue(value - removed)
            elif len(self.loaded) - top_index > KEEP_PAGES // 2 and (
                self.y_of(self.starts[-1]) > value + (AHEAD_SCREENS + 1) * screen
            ):
                self._drop_last()
            else:
                break

    # positions --------------------------------------------------------------------------

    def _index_of(self, position: int) -> int:
        index = 0
        for i, start in enumerate(self.starts):
            if start <= position:
                index = i
            else:
                break
        return index

    def _index_at(self, y: float) -> int:
        """Index of the loaded page shown at document height ``y``."""
        index = 0
        for i, start in enumerate(self.starts):
            if self.y_of(start) <= y + 1:
                index = i
            else:
                break
        return index

    def pos(self, page: int, offset: int) -> int:
        """Document position of ``offset`` in stored ``page`` (clamped to that page)."""
        if page not in self.loaded:
            return 0
        i = self.loaded.index(page)
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else self.end_position()
        return max(self.starts[i], min(self.starts[i] + max(0, offset), end))

    def _pitch(self) -> int:
        """The line spacing in percent of the font's height (line_pitch.py)."""
        return round(self.view.typography.line_spacing * 100)

    def end_position(self) -> int:
        return self.view.document().characterCount() - 1

    def page_offset(self, position: int) -> tuple[int, int]:
        """(stored page, offset in it) of a document position."""
        if not self.loaded:
            return (0, 0)
        i = self._index_of(position)
        return self.loaded[i], position - self.starts[i]

    def top_position(self) -> tuple[int, int]:
        """(stored page, offset) of the first character on screen."""
        cursor = self.view.cursorForPosition(QPoint(4, 2))
        return self.page_offset(cursor.position())

    def top_page(self) -> int:
        if not self.loaded:
            return 0
        return self.loaded[self._index_at(self.view.verticalScrollBar().value() + 8)]

    def scroll_to_position(self, position: int, *, centre: bool = False) -> None:
        bar = self.view.verticalScrollBar()
        y = self.y_of(position)
        if centre:
            y -= self.view.viewport().height() / 2 - 20
        elif position <= self.starts[self._index_of(position)]:
            y -= 4
        bar.setValue(int(max(0, y)))

    def chapter_bounds(self) -> tuple[int, int]:
        return (self.loaded[0], self.loaded[-1]) if self.loaded else (0, 0)

    def line_height(self) -> int:
        return int(
            self.view.fontMetrics().lineSpacing()
            * self.view.font_size
            / max(1, self.view.font().pointSize())
        )

    def visible_range(self) -> tuple[int, int]:
        """Document positions of the first and last characters on screen."""
        first = self.view.cursorForPosition(QPoint(0, 0)).position()
        rect = self.view.viewport().rect()
        last = self.view.cursorForPosition(QPoint(rect.width() - 1, rect.height() - 1)).position()
        return first, last

    def document_text(self) -> str:
        return self.view.document().toPlainText()

    def page_text(self, page: int) -> str:
        """The text of a loaded stored page as laid out here (offsets count in it)."""
        if page not in self.loaded:
            return ""
        i = self.loaded.index(page)
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else self.end_position()
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(self.starts[i])
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        return cursor.selectedText().replace("\u2029", "\n")

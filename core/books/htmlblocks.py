"""(X)HTML → blocks of plain text plus a small, safe HTML fragment for display.

Used by the EPUB and single-file HTML parsers. The display fragment keeps only inline
formatting, links and images that live inside the book (``book:/path``). Scripts, styles,
frames, forms and any remote resource are dropped here, so the reader view never has anything
to fetch or run.
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from core.books.model import Block
from core.books.titles import TITLE_CHARS, clean_title

__all__ = ["TITLE_CHARS", "clean_title", "html_document", "html_to_blocks", "resolve_relative"]

DROP = frozenset(
    [
        "script",
        "style",
        "noscript",
        "iframe",
        "frame",
        "frameset",
        "object",
        "embed",
        "applet",
        "form",
        "input",
        "button",
        "select",
        "textarea",
        "link",
        "meta",
        "head",
        "title",
        "svg",
        "math",
        "template",
        "audio",
        "video",
        "canvas",
        "base",
    ]
)
BLOCK_TAGS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "aside",
        "header",
        "footer",
        "main",
        "nav",
        "figure",
        "figcaption",
        "blockquote",
        "pre",
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tr",
        "td",
        "th",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "body",
        "html",
        "center",
        "address",
        "caption",
        "details",
        "summary",
    ]
)
INLINE_KEEP = frozenset(
    [
        "b",
        "strong",
        "i",
        "em",
        "u",
        "sub",
        "sup",
        "small",
        "code",
        "br",
        "s",
        "del",
        "ins",
        "mark",
        "q",
        "cite",
        "abbr",
    ]
)
HEADINGS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6"])

ImageResolver = Callable[[str], str | None]
"""Maps an ``<img src>`` to a ``book:/...`` URL, or None to drop the image."""


def _clean(text: str) -> str:
    """Whitespace runs (every character ``str.isspace`` knows: tabs, line ends, no-break and
    other Unicode spaces) become one space; none at either end. Same as
    ``" ".join(text.split())``, which is about 2.5 times faster than a regex on book text.

    Most of a book's text is already clean but for its line ends, so that case skips the
    splitting (3 times faster again): a printable string holds no whitespace but the
    ASCII space (tests/core/books/test_clean.py checks every code point), so without a
    double space only an end can need trimming."""
    if "\n" in text:
        text = text.replace("\n", " ")
    if "  " not in text and text.isprintable():
        return text.strip(" ")
    return " ".join(text.split())


TABLE_ROWS_CHARS = 1500
"""A table whose rows hold more text than this is cut into several table blocks, so that a
long table still pages and chunks on row boundaries."""
ROW_SEPARATOR = " · "


class _Builder:
    def __init__(
        self, resolve_image: ImageResolver | None, wanted: frozenset[str] | None = None
    ) -> None:
        self.blocks: list[Block] = []
        self.resolve_image = resolve_image
        self.wanted = wanted or None
        self.anchors: dict[str, int] = {}
        self._text: list[str] = []
        self._html: list[str] = []
        self._kind = "p"
        self._images = 0

    def flush(self) -> None:
        joined = "".join(self._text)
        if not self._images and (not joined or joined.isspace()):
            # no text (at most the white space between two blocks) and no image: no block
            self._text.clear()
            self._html.clear()
            self._kind = "p"
            return
        text = _clean(joined)
        frag = "".join(self._html).strip()
        if text:
            self.blocks.append(Block(self._kind, text, frag))
        elif self._images:
            self.blocks.append(Block("img", "", frag))
        self._text.clear()
        self._html.clear()
        self._kind = "p"
        self._images = 0

    def start(self, kind: str) -> None:
        self.flush()
        self._kind = kind

    def text(self, value: str) -> None:
        self._text.append(value)
        self._html.append(html.escape(value, quote=False))

    def raw(self, value: str) -> None:
        self._html.append(value)

    def image(self, url: str, alt: str) -> None:
        self._images += 1
        self._html.append(f'<img src="{html.escape(url)}" alt="{html.escape(alt)}">')

    def mark(self, node: LexborNode, is_block: bool) -> None:
        """Record the block index where an element the caller asked about (by ``id``, or
        ``name`` on old-style anchors) lands: the block being built, or the next one."""
        assert self.wanted is not None
        ids = [node.id]
        if node.tag == "a":
            ids.append(node.attributes.get("name"))
        for ident in ids:
            if ident and ident in self.wanted and ident not in self.anchors:
                if is_block:
                    self.flush()
                self.anchors[ident] = len(self.blocks)


def _cell(node: LexborNode, b: _Builder) -> tuple[str, str]:
    sub = _Builder(b.resolve_image, b.wanted)
    _walk(node, sub, False)
    sub.flush()
    for ident in sub.anchors:
        b.anchors.setdefault(ident, len(b.blocks))
    text = " ".join(blk.text for blk in sub.blocks if blk.text)
    frag = "<br>".join(
        html.escape(blk.text, quote=False) if blk.kind == "table" else blk.html
        for blk in sub.blocks
    )
    return text, frag


def _rows(table: LexborNode) -> list[LexborNode]:
    rows: list[LexborNode] = []
    child = table.child
    while child is not None:
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            row = child.child
            while row is not None:
                if row.tag == "tr":
                    rows.append(row)
                row = row.next
        child = child.next
    return rows


def _table(table: LexborNode, b: _Builder) -> None:
    """A table stays a table for display; its text is one line per row, cells joined by
    " · ", so search and the model read it as rows rather than a run of words."""
    b.flush()
    caption = table.css_first("caption")
    if caption is not None and caption.parent is not None and caption.parent.mem_id == table.mem_id:
        text = _clean(caption.text())
        if text:
            b.blocks.append(Block("p", text, html.escape(text, quote=False)))
    rows: list[tuple[str, str]] = []
    for tr in _rows(table):
        texts: list[str] = []
        cells: list[str] = []
        cell = tr.child
        while cell is not None:
            if cell.tag in ("td", "th"):
                text, frag = _cell(cell, b)
                if text:
                    texts.append(text)
                cells.append(f"<{cell.tag}>{frag}</{cell.tag}>")
            cell = cell.next
        if texts or any("<img" in c for c in cells):
            rows.append((ROW_SEPARATOR.join(texts), "<tr>" + "".join(cells) + "</tr>"))
    group: list[tuple[str, str]] = []
    size = 0

    def emit() -> None:
        if group:
            text = "\n".join(t for t, _ in group if t)
            frag = '<table border="1" cellspacing="0" cellpadding="4">'
            frag += "".join(h for _, h in group) + "</table>"
            b.blocks.append(Block("table" if text else "img", text, frag))

    for row in rows:
        if group and size + len(row[0]) > TABLE_ROWS_CHARS:
            emit()
            group = []
            size = 0
        group.append(row)
        size += len(row[0]) + 1
    emit()


def _safe_href(href: str) -> str | None:
    parts = urlsplit(href)
    if parts.scheme in ("http", "https", "mailto"):
        return href
    if not parts.scheme and parts.fragment and not parts.path:
        return None  # in-page anchors mean nothing once the page is cut into virtual pages
    return None


def _text_only(node: LexborNode, b: _Builder) -> bool:
    """The common paragraph whose only child is its text, made into a block at once: what
    walking it and flushing would give (``b`` has nothing pending). False for any other
    element, which the caller walks."""
    first = node.child
    if first is None or first.next is not None or first.tag != "-text":
        return False
    value = first.text_content or ""
    text = _clean(value)
    if text:
        b.blocks.append(Block(b._kind, text, html.escape(value, quote=False).strip()))
    b._kind = "p"
    return True


def _walk(node: LexborNode, b: _Builder, pre: bool) -> None:
    child = node.child
    while child is not None:
        tag = child.tag
        if b.wanted is not None and tag is not None and tag[0] != "-":
            b.mark(child, tag in BLOCK_TAGS or tag in HEADINGS)
        if tag == "-text":
            value = child.text_content or ""
            if pre:
                b._text.append(value)
                b._html.append(html.escape(value, quote=False))
            else:
                b.text(value)
        elif tag == "p":  # the most common element: what the BLOCK_TAGS branch does
            b.flush()
            if pre or not _text_only(child, b):
                _walk(child, b, pre)
                b.flush()
        elif tag in DROP or tag is None or tag.startswith("-"):
            pass
        elif tag in HEADINGS:
            b.start(tag)
            if pre or not _text_only(child, b):
                _walk(child, b, pre)
                b.flush()
        elif tag == "hr":
            b.flush()
        elif tag == "br":
            b.raw("<br>")
            b._text.append("\n" if pre else " ")
        elif tag == "img" or tag == "image":
            src = (
                child.attributes.get("src")
                or child.attributes.get("xlink:href")
                or child.attributes.get("href")
                or ""
            )
            url = b.resolve_image(src) if (b.resolve_image and src) else None
            if url:
                b.image(url, child.attributes.get("alt") or "")
        elif tag == "pre":
            b.start("pre")
            _walk(child, b, True)
            text = "".join(b._text).strip("\n")
            frag = "".join(b._html).strip("\n")
            if text.strip():
                b.blocks.append(Block("pre", text, f"{frag}"))
            b._text.clear()
            b._html.clear()
            b._kind = "p"
        elif tag in ("li", "dt", "dd"):
            b.start("li")
            if pre or not _text_only(child, b):
                _walk(child, b, pre)
                b.flush()
        elif tag == "blockquote":
            b.flush()
            before = len(b.blocks)
            _walk(child, b, pre)
            b.flush()
            for i in range(before, len(b.blocks)):
                blk = b.blocks[i]
                if blk.kind == "p":
                    b.blocks[i] = Block("quote", blk.text, blk.html)
        elif tag == "table":
            _table(child, b)
        elif tag in BLOCK_TAGS:
            if tag in ("td", "th", "tr", "thead", "tbody", "tfoot", "caption"):
                b.text(" ")
                _walk(child, b, pre)
                b.text(" ")
            else:
                b.flush()
                if pre or not _text_only(child, b):
                    _walk(child, b, pre)
                    b.flush()
        elif tag == "a":
            href = _safe_href(child.attributes.get("href") or "")
            if href:
                b.raw(f'<a href="{html.escape(href)}">')
                _walk(child, b, pre)
                b.raw("</a>")
            else:
                _walk(child, b, pre)
        elif tag in INLINE_KEEP:
            b.raw(f"<{tag}>")
            _walk(child, b, pre)
            b.raw(f"</{tag}>")
        else:
            _walk(child, b, pre)
        child = child.next


def html_to_blocks(
    markup: str | bytes, resolve_image: ImageResolver | None = None
) -> tuple[str, list[Block]]:
    """Parse a document and return (its <title>, its blocks in reading order)."""
    title, blocks, _ = html_document(markup, resolve_image)
    return title, blocks


def html_document(
    markup: str | bytes,
    resolve_image: ImageResolver | None = None,
    anchors: frozenset[str] | None = None,
) -> tuple[str, list[Block], dict[str, int]]:
    """Parse a document and return (its <title>, its blocks, where the ``anchors`` land).

    The last item maps each requested element id (or ``<a name>``) found in the document to
    the index of the block it starts or sits in; ids not found are absent.
    """
    if isinstance(markup, bytes):
        markup = markup.decode("utf-8", errors="replace")
    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("title")
    title = _clean(title_node.text()) if title_node is not None else ""
    root = tree.body or tree.root
    b = _Builder(resolve_image, anchors)
    if root is not None:
        if b.wanted is not None and root.tag == "body":
            b.mark(root, True)
        _walk(root, b, False)
    b.flush()
    return title, b.blocks, b.anchors


def resolve_relative(base_dir: str, src: str) -> str | None:
    """Resolve ``src`` relative to a document inside an archive; None for remote or unsafe."""
    parts = urlsplit(src)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    path = posixpath.normpath(posixpath.join(base_dir, unquote(parts.path)))
    if path.startswith(("../", "/")) or path == "..":
        return None
    return path

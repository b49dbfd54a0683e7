"""(X)HTML → blocks of plain text plus a small, safe HTML fragment for display.

Used by the EPUB and single-file HTML parsers. The display fragment keeps only inline
formatting, links and images that live inside the book (``book:/path``). Scripts, styles,
frames, forms and any remote resource are dropped here, so the reader view never has anything
to fetch or run.

The plain text is the book's text as search and the model read it: a note reference is
``[5]`` apart from its word, a note starts with its number, verse keeps its lines ("\n"), an
image is ``[Illustration: alt]``, a stage direction is in brackets and a block quote starts
with "> " (ARCHITECTURE.md, "What a page's text holds"). The walk is iterative.
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from core.books.bookcss import BREAK, BookStyles
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


BR = "\x1e"
"""A line break (``<br>``) inside a block until the block is finished: verse keeps its lines
("\n" in the block's text) while the source's own line ends stay spaces."""
NOTE_LINK = "margin:"
"""Links between a note reference and its note are stored as ``href="margin:DOC#ID"`` with
an anchor ``<a name="DOC#ID">`` where each lands; pagination turns them into page links."""
NOTE_SECTIONS = ("endnotes", "footnotes", "rearnotes")
NOTE_SELECTOR = ", ".join(
    [f"[epub\\:type*={word}]" for word in ("noteref", "endnote", "footnote", "backlink")]
    + ["[role^=doc-]"]
)
STAGE_SELECTOR = "[epub\\:type*=stage-direction]"
NOTE_ITEMS = ("endnote", "footnote", "rearnote")
STAGE_TAGS = frozenset(["i", "em", "span", "p", "td", "div", "b", "small"])
NOTE_TAGS = frozenset(["section", "aside", "div", "ol", "li", "body", "article"])
MAX_TABLE_DEPTH = 8


def _types(node: LexborNode) -> str:
    """An element's semantic types: ``epub:type`` and ``role``, one string."""
    attrs = node.attributes
    return f"{attrs.get('epub:type') or ''} {attrs.get('role') or ''}"


def illustration(alt: str) -> str:
    """What an image is in the plain text: its alternative text, marked as such."""
    alt = _clean(alt)
    return f"[Illustration: {alt}]" if alt else ""


class _Builder:
    def __init__(
        self,
        resolve_image: ImageResolver | None,
        wanted: frozenset[str] | None = None,
        doc: str = "",
        ref_labels: dict[str, str] | None = None,
    ) -> None:
        self.blocks: list[Block] = []
        self.resolve_image = resolve_image
        self.wanted = wanted or None
        self.anchors: dict[str, int] = {}
        self.doc = doc
        self.ref_labels: dict[str, str] = {} if ref_labels is None else ref_labels
        # what the document holds (html_document asks its tree), so the walk looks at
        # attributes only when it must
        self.notes = False
        self.stage = False
        self.sup_links = False
        self.in_notes = 0
        self._docs: dict[str, str] = {}  # link path → document (see target)
        self.ol_number = 1
        self.table_depth = 0
        self._text: list[str] = []
        self._html: list[str] = []
        self._kind = "p"
        self._images = 0
        self._markers: list[str] = []
        self._lines = False
        self._stage = False
        self._prefix: tuple[str, str] | None = None
        self._backlink = ""
        self.css: BookStyles | None = None  # the book's own styles (core.books.bookcss)
        self._style = ""
        self._break = False  # a scene break (<hr>) comes before the next block

    def _reset(self) -> None:
        self._text.clear()
        self._html.clear()
        self._kind = "p"
        self._images = 0
        self._lines = False
        self._stage = False
        if self._markers:
            self._markers.clear()
        self._style = ""

    def flush(self) -> None:
        if not self._text and not self._html and not self._images and not self._backlink:
            self._kind = "p"  # nothing pending (the common case between two paragraphs)
            return
        joined = "".join(self._text)
        if not self._images and (not joined or joined.isspace()):
            # no text (at most the white space between two blocks) and no image: no block
            if self._backlink and self.blocks and self._prefix is None:
                # a note's back link alone in its paragraph: it joins the note before
                last = self.blocks[-1]
                self.blocks[-1] = Block(last.kind, last.text, f"{last.html} {self._backlink}")
            self._backlink = ""
            self._reset()
            return
        self._backlink = ""
        if self._lines and self._kind[0] != "h":
            text = "\n".join([line for line in (_clean(part) for part in joined.split(BR)) if line])
        else:
            text = _clean(joined.replace(BR, " ") if self._lines else joined)
        if self._stage:
            text = text.replace("( ", "(").replace(" )", ")")
        frag = "".join(self._html).strip()
        kind = self._kind
        if self._images:
            rest = text
            for marker in self._markers:
                rest = rest.replace(marker, "", 1)
            if not rest.strip():
                kind = "img"
        if text or self._images:
            if self._prefix is not None:
                text = self._prefix[0] + text
                frag = self._prefix[1] + frag
                self._prefix = None
            self.blocks.append(Block(kind, text, frag, self._styled()))
        self._reset()

    def _styled(self) -> str:
        if self._break:
            self._break = False
            return f"{self._style}; {BREAK}" if self._style else BREAK
        return self._style

    def begin(self, node: LexborNode, kind: str = "") -> None:
        """A block element starts: what is pending is a block; this one has its style."""
        if kind:
            self.start(kind)
        else:
            self.flush()
        if self.css is not None:
            self._style = self.css.block_style(node)

    def start(self, kind: str) -> None:
        self.flush()
        self._kind = kind

    def text(self, value: str) -> None:
        self._text.append(value)
        self._html.append(html.escape(value, quote=False))

    def raw(self, value: str) -> None:
        self._html.append(value)

    def image(self, url: str | None, alt: str) -> None:
        marker = illustration(alt)
        if marker:
            self._markers.append(marker)
            self._text.append(f" {marker} ")
        if url:
            self._images += 1
            self._html.append(f'<img src="{html.escape(url)}" alt="{html.escape(alt)}">')
        elif marker:
            self._html.append(html.escape(marker, quote=False))

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

    def target(self, href: str) -> str:
        """``DOC#ID`` of a link inside the book ("" for anything else)."""
        path, hash_, fragment = href.partition("#")
        if not hash_ or not fragment:
            return ""
        doc = self._docs.get(path, "") if path in self._docs else None
        if doc is None:
            parts = urlsplit(path)
            doc = ""
            if not parts.scheme and not parts.netloc:
                doc = (
                    resolve_relative(posixpath.dirname(self.doc), path) if path else self.doc
                ) or ""
            self._docs[path] = doc
        return f"{doc}#{unquote(fragment)}" if doc or not path else ""

    def anchor(self, ident: str | None) -> str:
        if not ident:
            return ""
        return f'<a name="{html.escape(f"{self.doc}#{ident}")}"></a>'


def _cell(node: LexborNode, b: _Builder) -> tuple[str, str]:
    sub = _Builder(b.resolve_image, b.wanted, b.doc, b.ref_labels)
    sub.notes, sub.stage, sub.sup_links = b.notes, b.stage, b.sup_links
    sub.table_depth = b.table_depth + 1
    _walk(node, sub, False)
    sub.flush()
    for ident in sub.anchors:
        b.anchors.setdefault(ident, len(b.blocks))
    texts = [blk.text for blk in sub.blocks if blk.text]
    # verse in a cell (a play's speech) keeps its lines; other paragraphs run on
    text = "\n".join(texts) if any("\n" in t for t in texts) else " ".join(texts)
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
    if first is None or first.next is not None or first.tag != "-text" or b._prefix is not None:
        return False
    value = first.text_content or ""
    text = _clean(value)
    if text:
        b.blocks.append(Block(b._kind, text, html.escape(value, quote=False).strip(), b._styled()))
        b._style = ""
    b._kind = "p"
    return True


def _note_link(node: LexborNode, b: _Builder) -> bool:
    """A note reference or a note's back link: made here (True), or an ordinary link.

    A reference is kept apart from its word as ``[5]`` in the text (search still sees the
    word) and shown as a superscript link; a back link ("↩") has no text, only its link."""
    attrs = node.attributes
    types = f"{attrs.get('epub:type') or ''} {attrs.get('role') or ''} {attrs.get('class') or ''}"
    href = attrs.get("href") or ""
    label = ""
    if "backlink" in types:
        kind = "back"
    elif "noteref" in types or "fnanchor" in types or "footnote-ref" in types:
        kind = "ref"
    else:
        label = _clean(node.text())
        if label in ("↩", "↩︎", "↑") and "#" in href:
            kind = "back"
        elif (
            "#" in href
            and 0 < len(label) <= 4
            and " " not in label
            and (
                (node.parent is not None and node.parent.tag == "sup")
                or (node.child is not None and node.child.tag == "sup" and node.child.next is None)
            )
        ):
            kind = "ref"
        else:
            return False
    target = b.target(href)
    if kind == "back":
        link = f'<a href="{NOTE_LINK}{html.escape(target)}">↩</a>' if target else ""
        b.raw(link)
        b._backlink = link
        return True
    label = (label or _clean(node.text())).strip("[]()")
    if not label:
        return False
    if target:
        b.ref_labels.setdefault(target, label)
    in_sup = node.parent is not None and node.parent.tag == "sup"
    b._text.append(f"[{label}]")
    link = (
        f'<a href="{NOTE_LINK}{html.escape(target)}">{html.escape(label)}</a>'
        if target
        else html.escape(label)
    )
    b.raw(b.anchor(node.id) + (link if in_sup else f"<sup>{link}</sup>"))
    return True


def _note_start(node: LexborNode, b: _Builder) -> None:
    """The start of a note (an endnote's list item, a footnote aside): its number comes
    first, as ``[5]`` in the text, with the link anchor the references point at."""
    ident = node.id or ""
    key = f"{b.doc}#{ident}"
    label = b.ref_labels.get(key) or (str(b.ol_number) if node.tag == "li" else "")
    if node.tag == "li":
        b.ol_number += 1
    b.flush()
    text = f"[{label}] " if label else ""
    b._prefix = (text, b.anchor(ident) + (f"<b>{html.escape(label)}.</b> " if label else ""))


# what to do when an element's children are done
_NONE, _FLUSH, _RAW, _QUOTE, _PRE, _SPACE, _STAGE, _NOTES, _OL, _NOTE = range(10)


def _exit(b: _Builder, op: int, arg: object) -> None:
    if op == _FLUSH:
        b.flush()
    elif op == _RAW:
        b._html.append(arg)  # type: ignore[arg-type]
    elif op == _QUOTE:
        b.flush()
        for i in range(arg, len(b.blocks)):  # type: ignore[call-overload]
            blk = b.blocks[i]
            if blk.kind == "p":
                text = blk.text if "\n" in blk.text else f"> {blk.text}"
                b.blocks[i] = Block("quote", text, blk.html, blk.style)
    elif op == _PRE:
        text = "".join(b._text).strip("\n")
        frag = "".join(b._html).strip("\n")
        if text.strip():
            b.blocks.append(Block("pre", text, f"{frag}"))
        b._text.clear()
        b._html.clear()
        b._kind = "p"
    elif op == _SPACE:
        b.text(" ")
    elif op == _STAGE:
        b._text.append(")")
    elif op == _NOTES:
        b.flush()
        b.in_notes -= 1
    elif op == _OL:
        b.ol_number = arg  # type: ignore[assignment]
    elif op == _NOTE:
        b.flush()
        b._prefix = None


def _open_stage(
    stack: list[tuple[LexborNode | None, bool, int, object]], pre: bool, b: _Builder
) -> None:
    """A stage direction starts in the element being entered: "(" now, ")" when the walk
    leaves it (its ``_STAGE`` frame)."""
    b._text.append("(")
    b._stage = True
    stack.append((None, pre, _STAGE, None))


def _walk(node: LexborNode, b: _Builder, pre: bool) -> None:
    """Walk ``node``'s children in document order, without recursion (a document nested
    thousands of elements deep is read like any other): each open element is a frame on
    ``stack`` holding its next sibling and what to do when its children are done."""
    stack: list[tuple[LexborNode | None, bool, int, object]] = []
    child = node.child
    while True:
        if child is None:
            if not stack:
                return
            child, pre, op, arg = stack.pop()
            if op:
                _exit(b, op, arg)
            continue
        tag = child.tag
        nxt = child.next
        if tag == "-text":
            value = child.text_content or ""
            if pre:
                b._text.append(value)
                b._html.append(html.escape(value, quote=False))
            elif b._text or not value.isspace():  # white space before a block's text is none
                b.text(value)
            child = nxt
            continue
        if b.wanted is not None and tag is not None and tag[0] != "-":
            b.mark(child, tag in BLOCK_TAGS or tag in HEADINGS)
        stage = False
        if b.stage and tag in STAGE_TAGS and "stage-direction" in _types(child):
            stage = True
        if b.notes and tag in NOTE_TAGS:
            types = _types(child)
            if any(word in types for word in NOTE_SECTIONS):
                b.flush()
                b.in_notes += 1
                if tag == "ol":
                    b.ol_number = 1
                stack.append((nxt, pre, _NOTES, b.ol_number))
                child = child.child
                continue
            if tag == "ol":
                stack.append((nxt, pre, _OL, b.ol_number))
                start = child.attributes.get("start") or ""
                b.ol_number = int(start) if start.isdigit() else 1
                b.flush()
                child = child.child
                continue
            if (
                (tag == "li" and b.in_notes)
                or any(word in types for word in NOTE_ITEMS)
                or (tag == "li" and f"{b.doc}#{child.id}" in b.ref_labels)
            ):
                _note_start(child, b)
                stack.append((nxt, pre, _NOTE, None))
                child = child.child
                continue
        elif tag == "li" and b.ref_labels and f"{b.doc}#{child.id}" in b.ref_labels:
            _note_start(child, b)  # a list item a reference points at, in any document
            stack.append((nxt, pre, _NOTE, None))
            child = child.child
            continue
        if tag == "p":  # the most common element: what the BLOCK_TAGS branch does
            b.begin(child)
            if stage or pre or not _text_only(child, b):
                stack.append((nxt, pre, _FLUSH, None))
                if stage:
                    _open_stage(stack, pre, b)
                child = child.child
                continue
        elif tag in DROP or tag is None or tag[0] == "-":
            pass
        elif tag in HEADINGS:
            b.begin(child, tag)
            if pre or not _text_only(child, b):
                stack.append((nxt, pre, _FLUSH, None))
                child = child.child
                continue
        elif tag == "hr":
            b.flush()
            b._break = b.css is not None
        elif tag == "br":
            b.raw("<br>")
            if pre:
                b._text.append("\n")
            else:
                b._text.append(BR)
                b._lines = True
        elif tag == "img" or tag == "image":
            attrs = child.attributes
            src = attrs.get("src") or attrs.get("xlink:href") or attrs.get("href") or ""
            url = b.resolve_image(src) if (b.resolve_image and src) else None
            b.image(url, attrs.get("alt") or "")
        elif tag == "pre":
            b.start("pre")
            stack.append((nxt, pre, _PRE, None))
            pre = True
            child = child.child
            continue
        elif tag in ("li", "dt", "dd"):
            b.start("li")
            if stage or pre or not _text_only(child, b):
                stack.append((nxt, pre, _FLUSH, None))
                if stage:
                    _open_stage(stack, pre, b)
                child = child.child
                continue
        elif tag == "blockquote":
            b.flush()
            stack.append((nxt, pre, _QUOTE, len(b.blocks)))
            child = child.child
            continue
        elif tag == "table" and b.table_depth < MAX_TABLE_DEPTH:
            _table(child, b)
        elif tag in BLOCK_TAGS:
            if tag in ("td", "th", "tr", "thead", "tbody", "tfoot", "caption", "table"):
                b.text(" ")
                stack.append((nxt, pre, _SPACE, None))
            else:
                b.begin(child)
                if not stage and not pre and _text_only(child, b):
                    child = nxt
                    continue
                stack.append((nxt, pre, _FLUSH, None))
            if stage:
                _open_stage(stack, pre, b)
            child = child.child
            continue
        elif tag == "a":
            if (b.notes or b.sup_links) and _note_link(child, b):
                child = nxt
                continue
            href = _safe_href(child.attributes.get("href") or "")
            if href:
                b.raw(f'<a href="{html.escape(href)}">')
                stack.append((nxt, pre, _RAW, "</a>"))
            else:
                stack.append((nxt, pre, _NONE, None))
            child = child.child
            continue
        elif tag in INLINE_KEEP:
            if tag == "sup" and b.sup_links and _sup_note(child, b):
                child = nxt
                continue
            look = b.css.inline_style(child) if b.css is not None else ""
            if look:  # the book's small caps, slant or weight on it
                b.raw(f'<{tag}><span style="{look}">')
                stack.append((nxt, pre, _RAW, f"</span></{tag}>"))
            else:
                b.raw(f"<{tag}>")
                stack.append((nxt, pre, _RAW, f"</{tag}>"))
            if stage:
                _open_stage(stack, pre, b)
            child = child.child
            continue
        else:
            if b.css is not None and (look := b.css.inline_style(child)):
                b.raw(f'<span style="{look}">')  # a span with the book's small caps, slant
                stack.append((nxt, pre, _RAW, "</span>"))
            else:
                stack.append((nxt, pre, _NONE, None))
            if stage:
                _open_stage(stack, pre, b)
            child = child.child
            continue
        child = nxt


def _sup_note(sup: LexborNode, b: _Builder) -> bool:
    """``<sup><a href="#n5">5</a></sup>``: the reference alone (the link makes its own
    superscript)."""
    first = sup.child
    if first is None or first.tag != "a" or first.next is not None:
        return False
    return _note_link(first, b)


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
    *,
    doc: str = "",
    ref_labels: dict[str, str] | None = None,
    stylesheet: Callable[[str], str | None] | None = None,
) -> tuple[str, list[Block], dict[str, int]]:
    """Parse a document and return (its <title>, its blocks, where the ``anchors`` land).

    The last item maps each requested element id (or ``<a name>``) found in the document to
    the index of the block it starts or sits in; ids not found are absent. ``doc`` is the
    document's path in the book and ``ref_labels`` the note references seen so far in the
    book (target ``DOC#ID`` → label), shared across its documents so that a note is numbered
    as its reference is.
    """
    if isinstance(markup, bytes):
        markup = markup.decode("utf-8", errors="replace")
    tree = LexborHTMLParser(markup)
    title_node = tree.css_first("title")
    title = _clean(title_node.text()) if title_node is not None else ""
    root = tree.body or tree.root
    b = _Builder(resolve_image, anchors, doc, ref_labels)
    if stylesheet is not None and root is not None:
        b.css = BookStyles.of(tree, stylesheet)  # the book's CSS: what its pages keep
    if root is not None:
        b.notes = tree.css_first(NOTE_SELECTOR) is not None or any(
            key.startswith(f"{doc}#") for key in b.ref_labels
        )
        b.stage = tree.css_first(STAGE_SELECTOR) is not None
        b.sup_links = tree.css_first("sup") is not None
        if b.wanted is not None and root.tag == "body":
            b.mark(root, True)
        if b.notes and root.tag == "body" and any(w in _types(root) for w in NOTE_SECTIONS):
            b.in_notes += 1
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

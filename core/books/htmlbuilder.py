"""The builder the HTML walk fills: blocks of plain text plus their display HTML.

Constants shared by the walk (which tags are blocks, which are dropped), the whitespace
clean-up, and how an image reads in the text. ``htmlblocks`` walks a document into it.
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from core.books.bookcss import BREAK, BookStyles
from core.books.model import Block, make_block

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


ALIAS = "margin-book "
"""The page HTML names an embedded face ``margin-book FAMILY``: no installed font has that
name, so the text shows in it only while the window maps it to the book's loaded font (the
book's styles on), and in the reader's font otherwise (``core/books/epubfonts.py``)."""
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
MAX_INLINE_DEPTH = 24  # inline markup open at once (emphasis in a link in a quote…); deeper: text


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
        self.hiding = False  # the document hides elements (``hidden``, ``display: none``)
        self.link_ids: set[str] = set()  # ids links point at (its own, earlier documents')
        self.link_targets: dict[str, set[str]] | None = None  # the book's, by document
        self.browser = False  # either of the two: the walk looks at attributes
        self.lang = "en"
        self.quote_marks = True  # <q> gets marks (the book's CSS does not draw its own)
        self.font_classes: dict[str, str] = {}  # class → embedded font family
        self.svg_css = ""  # the document's <style> text, when it includes an SVG
        self._font = ""  # the family the block being built is shown in
        self.in_notes = 0
        self._docs: dict[str, str] = {}  # link path → document (see target)
        self.ol_number = 1
        self.table_depth = 0
        self.inline_depth = 0  # inline elements whose markup is open (``htmlblocks._inline``)
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
        self._font = ""
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
                self.blocks[-1] = Block(
                    last.kind, last.text, f"{last.html} {self._backlink}", last.style
                )
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
            if self._font:
                frag = f'<span style="font-family: {html.escape(repr(ALIAS + self._font))}">{frag}</span>'
            self.blocks.append(make_block(kind, text, frag, self._styled()))
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


def resolve_relative(base_dir: str, src: str) -> str | None:
    """Resolve ``src`` relative to a document inside an archive; None for remote or unsafe."""
    parts = urlsplit(src)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    path = posixpath.normpath(posixpath.join(base_dir, unquote(parts.path)))
    if path.startswith(("../", "/")) or path == "..":
        return None
    return path


def html_tree(markup: str | bytes) -> LexborHTMLParser:
    """The parsed document. Bytes go to lexbor as they are, checked nowhere: it reads them
    as UTF-8 with each invalid sequence a U+FFFD, exactly as ``bytes.decode("utf-8",
    "replace")`` does, whatever the document declares (tests/core/books/
    test_html_bytes.py); decoding them first only to check, 5 % of a 16 MiB EPUB's parse,
    changed nothing (issue 41)."""
    return LexborHTMLParser(markup)

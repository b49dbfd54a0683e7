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
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from core.books.bookcss import BookStyles
from core.books.htmlbuilder import (
    ALIAS,
    BLOCK_TAGS,
    BR,
    DROP,
    HEADINGS,
    INLINE_KEEP,
    MAX_INLINE_DEPTH,
    MAX_TABLE_DEPTH,
    NOTE_ITEMS,
    NOTE_SECTIONS,
    NOTE_SELECTOR,
    NOTE_TAGS,
    STAGE_SELECTOR,
    STAGE_TAGS,
    Block,
    ImageResolver,
    _Builder,
    _clean,
    _types,
    html_tree,
    illustration,
    make_block,
    resolve_relative,
)
from core.books.htmlextras import (
    HIDING_SELECTOR,
    font_of,
    hidden,
    internal_link,
    math_element,
    media_element,
    own_quotes,
    quotes,
    ruby_element,
    starts_quoted,
    sup_caret,
    svg_element,
)
from core.books.htmlflat import flat_blocks
from core.books.htmlnotes import _note_link, _note_start, _sup_note
from core.books.htmltables import _table
from core.books.titles import TITLE_CHARS, clean_title

__all__ = [
    "TITLE_CHARS",
    "Block",
    "ImageResolver",
    "clean_title",
    "html_document",
    "html_to_blocks",
    "illustration",
    "resolve_relative",
]


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
    if b._font:
        return False
    value = first.text_content or ""
    text = _clean(value)
    if text:
        # (most paragraphs have nothing to escape: looking costs a tenth of escaping)
        escape = "&" in value or "<" in value or ">" in value
        frag = html.escape(value, quote=False) if escape else value
        b.blocks.append(make_block(b._kind, text, frag.strip(), b._styled()))
        b._style = ""
    b._kind = "p"
    return True


# an inline element's dir: its text isolated in that direction (Unicode bidi isolates, which
# Qt's layout follows; search and offsets see one invisible character at each end)
ISOLATES = {"rtl": "\u2067", "ltr": "\u2066", "auto": "\u2068"}
POP_ISOLATE = "\u2069"

# what to do when an element's children are done
_NONE, _FLUSH, _RAW, _QUOTE, _PRE, _SPACE, _STAGE, _NOTES, _OL, _NOTE, _TEXT = range(11)


def _exit(b: _Builder, op: int, arg: object) -> None:
    if op == _FLUSH:
        b.flush()
    elif op == _RAW:
        b._html.append(arg)  # type: ignore[arg-type]
        b.inline_depth -= 1
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
    elif op == _TEXT:
        b.text(arg)  # type: ignore[arg-type]
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


def _inline(
    stack: list[tuple[LexborNode | None, bool, int, object]],
    nxt: LexborNode | None,
    pre: bool,
    b: _Builder,
    opening: str,
    closing: str,
) -> None:
    """Open an inline element's markup (closed when the walk leaves it), unless
    ``MAX_INLINE_DEPTH`` are open already: a book nesting thousands of them (issue 46 item 8:
    10,000 spans in 1.7 KB took the window 45 s) keeps its words, not its deepest markup."""
    if b.inline_depth >= MAX_INLINE_DEPTH:
        stack.append((nxt, pre, _NONE, None))
        return
    b.inline_depth += 1
    b.raw(opening)
    stack.append((nxt, pre, _RAW, closing))


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
        if b.browser and tag is not None and tag[0] != "-":
            if b.hiding and tag not in HEADINGS and hidden(child):
                # (a hidden heading still names its part: the contents and chapters use it)
                child = nxt
                continue
            if b.css is not None and b.css.hidden(child):
                child = nxt  # the book's CSS hides it (Standard Ebooks' title page, imprint)
                continue
            if b.font_classes and (family := font_of(child, b.font_classes)):
                if tag in BLOCK_TAGS or tag in HEADINGS:
                    b.flush()
                    b._font = family  # the block's HTML is wrapped in it
                else:
                    style = html.escape(repr(ALIAS + family))
                    _inline(stack, nxt, pre, b, f'<span style="font-family: {style}">', "</span>")
                    nxt = None
            if b.link_ids and child.id in b.link_ids:
                _link_anchor(child, tag in BLOCK_TAGS or tag in HEADINGS, b)
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
        elif tag == "math":
            math_element(child, b)
        elif tag == "svg":
            svg_element(child, b)
        elif tag == "audio" or tag == "video":
            media_element(child, b)
        elif tag == "ruby":
            ruby_element(child, b)
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
            _table(child, b, _walk)
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
            raw_href = child.attributes.get("href") or ""
            href = _safe_href(raw_href)
            if href:
                _inline(stack, nxt, pre, b, f'<a href="{html.escape(href)}">', "</a>")
            elif raw_href and (inside := internal_link(raw_href, b)):
                _inline(stack, nxt, pre, b, f'<a href="{inside}">', "</a>")
            else:
                stack.append((nxt, pre, _NONE, None))
            child = child.child
            continue
        elif tag in INLINE_KEEP:
            if tag == "sup" and b.sup_links and _sup_note(child, b):
                child = nxt
                continue
            if tag == "q":
                if b.quote_marks and not starts_quoted(child, b):
                    opening, closing = quotes(b.lang)
                    b.text(opening)
                    stack.append((nxt, pre, _TEXT, closing))
                else:  # the book draws its own marks (its CSS, or the text has them)
                    stack.append((nxt, pre, _NONE, None))
                child = child.child
                continue
            if tag == "sup":
                sup_caret(child, b)
            look = b.css.inline_style(child) if b.css is not None else ""
            if look:  # the book's small caps, slant or weight on it
                _inline(stack, nxt, pre, b, f'<{tag}><span style="{look}">', f"</span></{tag}>")
            else:
                _inline(stack, nxt, pre, b, f"<{tag}>", f"</{tag}>")
            if stage:
                _open_stage(stack, pre, b)
            child = child.child
            continue
        else:
            if b.css is not None and (look := b.css.inline_style(child)):
                # a span with the book's small caps, slant
                _inline(stack, nxt, pre, b, f'<span style="{look}">', "</span>")
            elif isolate := ISOLATES.get((child.attributes.get("dir") or "").strip().lower()):
                b.text(isolate)  # an inline run in another direction: drawn as the book says
                stack.append((nxt, pre, _TEXT, POP_ISOLATE))
            else:
                stack.append((nxt, pre, _NONE, None))
            if stage:
                _open_stage(stack, pre, b)
            child = child.child
            continue
        child = nxt


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
    link_targets: dict[str, set[str]] | None = None,
    font_classes: dict[str, str] | None = None,
    quote_marks: bool = True,
    stylesheet: Callable[[str], str | None] | None = None,
) -> tuple[str, list[Block], dict[str, int]]:
    """Parse a document and return (its <title>, its blocks, where the ``anchors`` land).

    The last item maps each requested element id (or ``<a name>``) found in the document to
    the index of the block it starts or sits in; ids not found are absent. ``doc`` is the
    document's path in the book and ``ref_labels`` the note references seen so far in the
    book (target ``DOC#ID`` → label), shared across its documents so that a note is numbered
    as its reference is.
    """
    tree = html_tree(markup)
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
        b.hiding = tree.css_first(HIDING_SELECTOR) is not None
        if doc:
            b.link_ids = _link_ids(tree, doc) | (link_targets or {}).get(doc, set())
            b.link_targets = link_targets
        b.font_classes = font_classes or {}
        b.quote_marks = quote_marks and not (
            tree.css_first("q") is not None and any(own_quotes(n.text()) for n in tree.css("style"))
        )
        if tree.css_first("svg") is not None:
            b.svg_css = "\n".join(
                node.text()
                for node in tree.css("style")
                if node.parent is None or node.parent.tag != "svg"
            )
        b.browser = b.hiding or bool(b.link_ids) or bool(b.font_classes)
        b.browser = b.browser or (b.css is not None and b.css.hides())
        root_lang = (
            (tree.root.attributes.get("lang") or tree.root.attributes.get("xml:lang"))
            if tree.root
            else None
        )
        # the quotes of <q> follow the document's own language; the package's dc:language is
        # not inherited by a content document that declares none (W3C pkg-lang_but_not_content)
        b.lang = root_lang or "en"
        if b.wanted is not None and root.tag == "body":
            b.mark(root, True)
        if b.notes and root.tag == "body" and any(w in _types(root) for w in NOTE_SECTIONS):
            b.in_notes += 1
        if not flat_blocks(tree, root, b):  # (a flat document's paragraphs: core.books.htmlflat)
            _walk(root, b, False)
    b.flush()
    return title, b.blocks, b.anchors


def _link_anchor(node: LexborNode, is_block: bool, b: _Builder) -> None:
    """Where a link (or a printed page of the page-list) lands: an anchor at the start of
    the block the element starts or, inside a paragraph, where it stands."""
    anchor = b.anchor(node.id)
    if is_block:
        b.flush()
    if is_block or not "".join(b._text).strip():
        # nothing of this block yet: the anchor starts the next block that has text
        b._prefix = (b._prefix[0], b._prefix[1] + anchor) if b._prefix else ("", anchor)
    else:
        b.raw(anchor)


def _link_ids(tree: LexborHTMLParser, doc: str) -> set[str]:
    """Ids this document's own links point at (``href="#id"``): each gets an anchor, so
    the link lands on the page that holds it."""
    ids: set[str] = set()
    for link in tree.css('a[href^="#"]'):
        fragment = (link.attributes.get("href") or "")[1:]
        if fragment:
            ids.add(unquote(fragment))
    return ids

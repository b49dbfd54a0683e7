"""The parts of an EPUB's documents a browser handles before the HTML walk: which image a
reference shows, spine items that are pictures (SVG documents, images with a described
fallback), and whether a document is well-formed XML (reported, then read as a browser
repairs it).
"""

from __future__ import annotations

import html
import posixpath
import re
from xml.parsers import expat

from selectolax.lexbor import LexborHTMLParser

from core.books.epubcfi import CFI_ID, with_cfi_ids
from core.books.epubpackage import Package, SpineDoc, _resolve
from core.books.epubzip import EpubArchive
from core.books.htmlblocks import html_document
from core.books.htmlbuilder import _clean, illustration, resolve_relative
from core.books.model import Block

MAX_DATA_URL = 2 * 1024 * 1024
"""A ``data:`` image larger than this is not kept in the page (its alt text is)."""
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|jpg|gif|webp|svg\+xml|bmp)[;,]", re.I)
_SUBSET = re.compile(rb"<!DOCTYPE[^\[>]*\[(.*?)\]\s*>", re.S | re.I)
_DECLARED = re.compile(rb"<!ENTITY\s+%?\s*([\w.-]+)")


def book_image(pkg: Package, arc: EpubArchive, doc_dir: str, src: str) -> str | None:
    """The URL the page shows for an image reference: a ``data:`` image as it is, or
    ``book:/PATH`` for a file the manifest lists (following its fallbacks to a type the
    view draws); None for anything else (the page shows the alt text instead)."""
    src = src.strip()
    if src[:5].lower() == "data:":
        return src if DATA_IMAGE.match(src) and len(src) <= MAX_DATA_URL else None
    target = _resolve(doc_dir, src)
    if target is None or target not in pkg.listed:
        return None
    shown = pkg.image_for(target)
    return f"book:/{shown}" if shown and arc.has(shown) else None


def strip_subset(data: bytes) -> bytes:
    """Remove an internal DTD subset (``<!DOCTYPE html [ ... ]>``) and the references to
    the entities it declares: a browser shows neither, and nothing is ever expanded."""
    if data.find(b"[", 0, 65536) < 0:
        return data  # (no subset without its "[": one memchr instead of the pattern, 60 µs)
    match = _subset(data)
    if match is None:
        return data
    names = set(_DECLARED.findall(match.group(1)))
    body = data[: match.start()] + b"<!DOCTYPE html>" + data[match.end() :]
    for name in names:
        body = body.replace(b"&" + name + b";", b"")
    return body


def _subset(data: bytes) -> re.Match[bytes] | None:
    """``_SUBSET.search(data, 0, 65536)`` (in the head, in place: no copy), tried only where
    a declaration starts with "<!DOCTYPE" that can own a "[": the pattern's search, or one
    for "<!" (two bytes: no memchr), looks at every byte (60 µs a document); these are a
    few memchr. A subset's "[" is the first "[" after its "<!DOCTYPE", with no ">" between,
    so only a "<!" after both the "[" and the ">" before that "[" can start a match."""
    start = 0
    bracket = data.find(b"[", 0, 65536)
    while bracket >= 0:
        at = data.find(b"<!", max(start, data.rfind(b">", start, bracket) + 1), bracket)
        while at >= 0:
            if data[at + 2 : at + 9].upper() == b"DOCTYPE":
                match = _SUBSET.match(data, at, 65536)
                if match is not None:
                    return match
            at = data.find(b"<!", at + 2, bracket)
        start = bracket + 1
        bracket = data.find(b"[", start, 65536)
    return None


def xml_problem(data: bytes) -> str:
    """Why an XHTML document is not well-formed XML ("" when it is). The reader still shows
    it as a browser's HTML parser repairs it; the book's details report the problem."""
    return xml_check(data)[0]


def xml_check(data: bytes) -> tuple[str, bool]:
    """``xml_problem(data)``, and whether expat read every byte of ``data`` as UTF-8 (then
    they are valid UTF-8: expat refuses what Python's decoder refuses). (The HTML parser
    needs neither: core.books.htmlbuilder.html_tree; the parse leaves the check to
    core.books.epubcheck.)"""
    stripped = strip_subset(data)
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(stripped, True)
    except expat.ExpatError as exc:
        reason = expat.ErrorString(exc.code) if exc.code else str(exc)
        if "undefined entity" in reason:
            return "", False  # HTML entities (&nbsp;) that the XHTML DTD would define
        problem = f"not well-formed XML (line {exc.lineno}: {reason})"
        return f"{problem}; shown as a browser repairs it", False
    return "", stripped is data and _read_as_utf8(data)


_ENCODING_DECLARED = re.compile(rb"(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*[\"']([^\"']*)")


def _read_as_utf8(data: bytes) -> bool:
    """Whether expat reads ``data`` as UTF-8: no UTF-16 byte order or zero bytes at the
    start, and no other encoding declared."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in data[:4]:
        return False
    declared = _ENCODING_DECLARED.match(data)
    return declared is None or declared.group(1).strip().lower() == b"utf-8"


def svg_text(data: bytes) -> str:
    """The words an SVG document draws (its ``<text>`` elements), for search and the model."""
    tree = LexborHTMLParser(data.decode("utf-8", errors="replace"))
    return _clean(" ".join(node.text(separator=" ") for node in tree.css("text")))


def picture_document(
    arc: EpubArchive, pkg: Package, doc: SpineDoc, ref_labels: dict[str, str]
) -> tuple[str, list[Block], dict[str, int]]:
    """A spine item that is a picture: an SVG document (drawn, its words as the page's
    text) or an image (drawn, the XHTML fallback that describes it as its text)."""
    data = arc.read(doc.path)
    if doc.kind == "svg":
        words = svg_text(data)
    elif doc.text_from and arc.has(doc.text_from):
        _, blocks, _ = html_document(
            arc.read(doc.text_from), doc=doc.text_from, ref_labels=ref_labels
        )
        words = " ".join(b.text for b in blocks if b.text)
    else:
        words = ""
    alt = html.escape(words)
    frag = f'<img src="book:/{html.escape(doc.path)}" alt="{alt}">'
    if doc.kind == "svg" and b"<image" in data:
        # an SVG page wrapping raster images (a scanned page, a comic panel): the images
        # themselves, since an SVG drawn from memory cannot reach the files beside it
        tree = LexborHTMLParser(data.decode("utf-8", errors="replace"))
        urls = [
            book_image(pkg, arc, posixpath.dirname(doc.path), href)
            for node in tree.css("image")
            if (href := node.attributes.get("xlink:href") or node.attributes.get("href"))
        ]
        if urls and all(urls):
            frag = "".join(f'<img src="{html.escape(u or "")}" alt="{alt}">' for u in urls)
    text = words if doc.kind == "svg" else illustration(words)
    title = posixpath.splitext(posixpath.basename(doc.path))[0]
    return title, [Block("img", text, frag)], {}


def page_ids(data: bytes, doc: str, link_targets: dict[str, set[str]]) -> bytes:
    """``data`` with the ids a page-list's CFI targets need (core.books.epubcfi)."""
    if any(f.startswith(CFI_ID) for f in link_targets.get(doc, ())):
        return with_cfi_ids(data, link_targets[doc])
    return data


def spine_html(
    arc: EpubArchive,
    pkg: Package,
    doc: str,
    data: bytes,
    *,
    wanted: frozenset[str],
    ref_labels: dict[str, str],
    link_targets: dict[str, set[str]],
    font_classes: dict[str, str],
    quote_marks: bool,
    sheets: dict[str | None, str | None],
    check: bool = True,
) -> tuple[str | None, str, list[Block], dict[str, int]]:
    """An XHTML spine document's (problem, title, blocks, anchors): ``data`` its bytes
    (``strip_subset`` and ``page_ids`` done), the rest what the book's documents before it left (the note
    references and link targets they named, embedded fonts' classes) and the book's style
    sheets read so far (filled as they are read). ``check=False``: whether it is well-formed
    XML is not looked at (problem None: ``late_problems`` does it after the parse)."""
    doc_dir = posixpath.dirname(doc)

    def resolve_image(src: str) -> str | None:
        return book_image(pkg, arc, doc_dir, src)

    def read_css(href: str) -> str | None:
        target = resolve_relative(doc_dir, href)  # the book's CSS: core.books.bookcss
        if target not in sheets:
            found = target is not None and arc.has(target)
            sheets[target] = arc.read(target or "").decode("utf-8", "replace") if found else None
        return sheets[target]

    problem = xml_check(data)[0] if check else None
    title, blocks, anchors = html_document(
        data,
        resolve_image,
        wanted,
        doc=doc,
        ref_labels=ref_labels,
        link_targets=link_targets,
        font_classes=font_classes,
        quote_marks=quote_marks,
        stylesheet=read_css,
    )
    return problem, title, blocks, anchors

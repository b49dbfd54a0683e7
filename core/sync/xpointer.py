"""KOReader's XPointers in an EPUB, and the places in Margin's pages they name.

KOReader (crengine) writes a reflowable book's position as an XPointer into the DOM it
builds: each spine document is a ``DocFragment`` under one ``body``, so
``/body/DocFragment[20]/body/p[22]/text().45`` is the 45th character of the text in the
22nd ``p`` of the 20th spine document's body. A step carries ``[n]`` (1-based) only when its
parent has more than one child of that name; ``text()`` counts the text nodes of its element.

Margin reads the same spine documents from the book's file into text nodes (whitespace-only
ones are left out, as crengine drops them between blocks) and matches the two texts with a
text-quote anchor (``core.store.anchors``): the words at the XPointer are found in Margin's pages
near the percentage, and the first words of a Margin page are found among the text nodes.
That is exact where the words are the same and fuzzy where Margin's pages differ (note
references in brackets, pictures as ``[Illustration: …]``).
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path

from core.books.epubzip import EpubArchive, _find_opf, _local, _xml
from core.store.anchors import BookText, TextQuote

QUOTE = 64  # characters of text matched between KOReader's document and Margin's pages
_STEP = re.compile(r"^([A-Za-z_][\w.-]*|text\(\))(?:\[(\d+)\])?$")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


@dataclass(frozen=True)
class TextNode:
    element: str  # the element's XPointer as crengine writes it
    index: int  # 1-based among the element's text nodes
    count: int  # how many text nodes the element has
    text: str


@dataclass(frozen=True)
class Place:
    """A place in Margin's pages: page number and offset in its stored text."""

    page: int
    offset: int
    fuzzy: bool = False


def _key(xpointer: str) -> str:
    return xpointer.replace("[1]", "")


def split_xpointer(xpointer: str) -> tuple[list[tuple[str, int]], int] | None:
    """The steps (name, 1-based index) and the character offset of an XPointer; None when
    it is not one."""
    text = xpointer.strip()
    offset = 0
    tail = re.search(r"\.(\d+)$", text)
    if tail:
        offset = int(tail.group(1))
        text = text[: tail.start()]
    if not text.startswith("/"):
        return None
    steps: list[tuple[str, int]] = []
    for part in text.split("/")[1:]:
        m = _STEP.match(part)
        if m is None:
            return None
        steps.append((m.group(1), int(m.group(2) or 1)))
    return steps, offset


class _Builder(HTMLParser):
    """A tolerant HTML → ElementTree builder for documents that are not well-formed XML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = ET.Element("html")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = ET.SubElement(self.stack[-1], tag)
        if tag not in _VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ET.SubElement(self.stack[-1], tag)

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        parent = self.stack[-1]
        if len(parent):
            last = parent[-1]
            last.tail = (last.tail or "") + data
        else:
            parent.text = (parent.text or "") + data


def _parse_document(data: bytes) -> ET.Element:
    try:
        root = ET.fromstring(data)
        for el in root.iter():
            if isinstance(el.tag, str):
                el.tag = _local(el.tag)
        return root
    except ET.ParseError:
        builder = _Builder()
        builder.feed(data.decode("utf-8", "replace"))
        builder.close()
        return builder.root


def _name(el: ET.Element) -> str:
    return el.tag if isinstance(el.tag, str) else ""


def _walk(el: ET.Element, path: str, nodes: list[TextNode], starts: dict[str, int]) -> None:
    starts.setdefault(_key(path), len(nodes))
    pieces = [el.text] + [sub.tail for sub in el]
    texts = [t for t in pieces if t and t.strip()]
    seen = 0
    counts: dict[str, int] = {}
    for sub in el:
        counts[_name(sub)] = counts.get(_name(sub), 0) + 1
    index: dict[str, int] = {}
    pending = el.text
    children: list[ET.Element | None] = [None, *list(el)]
    for child in children:
        if child is not None:
            name = _name(child)
            if name:
                index[name] = index.get(name, 0) + 1
                step = f"{name}[{index[name]}]" if counts[name] > 1 else name
                _walk(child, f"{path}/{step}", nodes, starts)
            pending = child.tail
        if pending and pending.strip():
            seen += 1
            nodes.append(TextNode(path, seen, len(texts), pending))


def _spine(arc: EpubArchive) -> list[str]:
    """The spine's XHTML documents in the package's order (crengine's DocFragments)."""
    opf_path = _find_opf(arc)
    opf = _xml(arc.read(opf_path), arc.path, "package file")
    base = posixpath.dirname(opf_path)
    manifest: dict[str, tuple[str, str]] = {}
    order: list[str] = []
    for el in opf.iter():
        tag = _local(el.tag) if isinstance(el.tag, str) else ""
        if tag == "item" and el.get("id"):
            href = posixpath.normpath(posixpath.join(base, el.get("href", "")))
            manifest[el.get("id", "")] = (href, el.get("media-type", ""))
        elif tag == "itemref" and el.get("idref"):
            order.append(el.get("idref", ""))
    docs = []
    for idref in order:
        href, media = manifest.get(idref, ("", ""))
        if href and "html" in media and arc.has(href):
            docs.append(href)
    return docs


class EpubPositions:
    """An EPUB's text nodes as KOReader addresses them."""

    def __init__(self, path: Path) -> None:
        self.nodes: list[TextNode] = []
        self.starts: dict[str, int] = {}  # element → its first text node
        arc = EpubArchive(path)
        try:
            for number, doc in enumerate(_spine(arc), start=1):
                root = _parse_document(arc.read(doc))
                body = next((el for el in root.iter() if _name(el) == "body"), root)
                _walk(body, f"/body/DocFragment[{number}]/body", self.nodes, self.starts)
        finally:
            arc.close()
        self.text = BookText([(i + 1, node.text) for i, node in enumerate(self.nodes)])

    def node_at(self, xpointer: str) -> tuple[int, int] | None:
        """(text node index, offset in it) of ``xpointer``; a pointer to an element (or one
        whose last steps this reading does not have) is its first text."""
        split = split_xpointer(xpointer)
        if split is None:
            return None
        steps, offset = split
        names = [f"{n}[{i}]" for n, i in steps]
        if names and steps[-1][0] == "text()":
            element = _key("/" + "/".join(names[:-1]))
            wanted = steps[-1][1]
            for i in range(self.starts.get(element, len(self.nodes)), len(self.nodes)):
                node = self.nodes[i]
                if _key(node.element) == element and node.index == wanted:
                    return i, min(offset, len(node.text))
            names = names[:-1]
            offset = 0
        while names:
            at = self.starts.get(_key("/" + "/".join(names)))
            if at is not None and at < len(self.nodes):
                same = _key(self.nodes[at].element) == _key("/" + "/".join(names))
                return at, offset if same else 0
            names = names[:-1]
            offset = 0
        return None

    def fragment_start(self, number: int) -> int | None:
        """The first text node of spine document ``number`` (1-based), None when it has none."""
        at = self.starts.get(_key(f"/body/DocFragment[{number}]/body"))
        return at if at is not None and at < len(self.nodes) else None

    def xpointer(self, node: int, offset: int) -> str:
        n = self.nodes[node]
        step = f"text()[{n.index}]" if n.count > 1 else "text()"
        return f"{n.element}/{step}.{offset}"

    def fraction(self, node: int, offset: int) -> float:
        return self.text.position(node + 1, offset) / max(1, len(self.text))

    def quote_at(self, node: int, offset: int) -> TextQuote:
        at = self.text.position(node + 1, offset)
        return self.text.quote_between(at, min(len(self.text), at + QUOTE))

    def find(self, quote: TextQuote, fraction: float) -> tuple[int, int] | None:
        found = self.text.find(quote, int(fraction * len(self.text)))
        if found is None:
            return None
        return found.quote.page - 1, found.quote.start


@lru_cache(maxsize=8)
def _positions(path: str, mtime_ns: int) -> EpubPositions:
    return EpubPositions(Path(path))


def positions_of(path: Path) -> EpubPositions:
    """The positions of the EPUB at ``path`` (kept while the file is unchanged)."""
    return _positions(str(path), path.stat().st_mtime_ns)


def to_margin(
    positions: EpubPositions, pages: BookText, xpointer: str, percentage: float
) -> Place | None:
    """Margin's place for KOReader's ``xpointer`` (``percentage`` says where to look first)."""
    at = positions.node_at(xpointer)
    if at is None:
        return None
    quote = positions.quote_at(*at)
    found = pages.find(quote, int(percentage * len(pages.text)))
    if found is None:
        return None
    return Place(found.quote.page, found.quote.start, found.fuzzy)


def from_margin(
    positions: EpubPositions, pages: BookText, page: int, offset: int = 0
) -> str | None:
    """KOReader's XPointer for ``offset`` in Margin's ``page``."""
    if not positions.nodes:
        return None
    at = pages.position(page, offset)
    quote = pages.quote_between(at, min(len(pages.text), at + QUOTE))
    if not quote.exact:
        return None
    found = positions.find(quote, at / max(1, len(pages.text)))
    if found is None:
        return None
    return positions.xpointer(*found)

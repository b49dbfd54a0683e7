"""An EPUB's table of contents as the book states it: the EPUB 3 nav, or the EPUB 2 NCX."""

from __future__ import annotations

import posixpath
from typing import NamedTuple
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

from core.books.epubzip import EpubArchive, _local, _text, _xml
from core.books.htmlbuilder import resolve_relative


class _Entry(NamedTuple):
    """A contents entry as the book states it: raw title, depth, document, fragment id."""

    title: str
    level: int
    doc: str
    fragment: str


def _entry(title: str, level: int, base: str, href: str) -> _Entry | None:
    parts = urlsplit(href)
    target = resolve_relative(base, href.split("#")[0]) if parts.path else None
    title = " ".join(title.split())
    if not title or not target:
        return None
    return _Entry(title, level, target, unquote(parts.fragment))


def _nav_toc(arc: EpubArchive, nav_path: str) -> list[_Entry]:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(arc.read(nav_path).decode("utf-8", errors="replace"))
    navs = tree.css("nav")
    toc_nav = next(
        (n for n in navs if (n.attributes.get("epub:type") or "").split().count("toc")), None
    )
    if toc_nav is None and navs:
        toc_nav = navs[0]
    if toc_nav is None:
        return []
    base = posixpath.dirname(nav_path)
    out: list[_Entry] = []

    def walk(ol: object, level: int) -> None:
        node = getattr(ol, "child", None)
        while node is not None:
            if node.tag == "li":
                link = node.css_first("a") or node.css_first("span")
                if link is not None:
                    label = link.text()
                    if not label.strip():
                        # an image entry: its alternative text (or title) names it
                        img = link.css_first("img")
                        attrs = img.attributes if img is not None else {}
                        label = (
                            attrs.get("alt")
                            or attrs.get("title")
                            or link.attributes.get("title")
                            or ""
                        )
                    entry = _entry(label, level, base, link.attributes.get("href") or "")
                    if entry is not None:
                        out.append(entry)
                child = node.child
                while child is not None:
                    if child.tag == "ol":
                        walk(child, level + 1)
                    child = child.next
            node = node.next

    top = toc_nav.css_first("ol")
    if top is not None:
        walk(top, 1)
    return out


def _ncx_toc(arc: EpubArchive, ncx_path: str) -> list[_Entry]:
    root = _xml(arc.read(ncx_path), arc.path, "table of contents (NCX)")
    base = posixpath.dirname(ncx_path)
    out: list[_Entry] = []

    def walk(parent: ET.Element, level: int) -> None:
        for point in parent:
            if _local(point.tag) != "navPoint":
                continue
            label = next((c for c in point if _local(c.tag) == "navLabel"), None)
            content = next((c for c in point if _local(c.tag) == "content"), None)
            src = content.get("src", "") if content is not None else ""
            entry = _entry(_text(label), level, base, src)
            if entry is not None:
                out.append(entry)
            walk(point, level + 1)

    nav_map = next((c for c in root if _local(c.tag) == "navMap"), None)
    if nav_map is not None:
        walk(nav_map, 1)
    return out


def page_list(arc: EpubArchive, nav_path: str | None, ncx_path: str | None) -> list[_Entry]:
    """The printed page numbers the book marks (the nav's ``page-list``, else the NCX's
    ``pageList``): each entry's title is the printed page's label ("40", "xii")."""
    from selectolax.lexbor import LexborHTMLParser

    out: list[_Entry] = []
    if nav_path and arc.has(nav_path):
        tree = LexborHTMLParser(arc.read(nav_path).decode("utf-8", errors="replace"))
        base = posixpath.dirname(nav_path)
        for nav in tree.css("nav"):
            if "page-list" not in (nav.attributes.get("epub:type") or "").split():
                continue
            for link in nav.css("a"):
                entry = _entry(link.text(), 1, base, link.attributes.get("href") or "")
                if entry is not None:
                    out.append(entry)
    if not out and ncx_path and arc.has(ncx_path):
        root = _xml(arc.read(ncx_path), arc.path, "table of contents (NCX)")
        base = posixpath.dirname(ncx_path)
        for target in root.iter():
            if _local(target.tag) != "pageTarget":
                continue
            label = next((c for c in target if _local(c.tag) == "navLabel"), None)
            content = next((c for c in target if _local(c.tag) == "content"), None)
            src = content.get("src", "") if content is not None else ""
            entry = _entry(_text(label), 1, base, src)
            if entry is not None:
                out.append(entry)
    return out

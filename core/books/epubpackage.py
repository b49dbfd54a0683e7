"""An EPUB's package document read as a browser-like reading system reads it: the manifest,
the spine with its fallback chains and non-linear items, the metadata with its direction,
and the rule for which resources a page may show (only those the manifest lists).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

from core.books.epubzip import EpubArchive, _local, _text

HTML_TYPES = frozenset(["application/xhtml+xml", "text/html", "application/x-dtbook+xml"])
SVG_TYPE = "image/svg+xml"
IMAGE_TYPES = frozenset(
    [
        "image/jpeg",
        "image/png",
        "image/gif",
        "image/webp",
        SVG_TYPE,
        "image/bmp",
        "image/avif",
        "image/jxl",
    ]
)
HTML_SUFFIXES = (".xhtml", ".html", ".htm")
PICTURE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".svg", ".bmp")
RLI, PDI = "\u2067", "\u2069"
"""Right-to-left isolate: a title or name marked ``dir="rtl"`` keeps its order in any widget."""


@dataclass(frozen=True)
class Item:
    path: str
    media_type: str
    properties: str = ""
    fallback: str = ""


@dataclass(frozen=True)
class SpineDoc:
    """One document of the reading order: ``kind`` is html, svg or image (an image spine
    item shown as a page; ``text_from`` an XHTML fallback that describes it)."""

    path: str
    kind: str
    linear: bool = True
    text_from: str = ""


@dataclass
class Package:
    base: str
    manifest: dict[str, Item] = field(default_factory=dict)
    spine: list[SpineDoc] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)  # every manifest path
    by_path: dict[str, Item] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # media types of spine items skipped

    def image_for(self, path: str) -> str | None:
        """The manifest path an image reference shows: itself when it is a core image type
        (or plainly a picture by its name, whatever type a careless manifest gives it), else
        the first such image down its fallback chain; None when the manifest lacks it."""
        first = item = self.by_path.get(path)
        seen: set[str] = set()
        while item is not None and item.path not in seen:
            seen.add(item.path)
            if item.media_type in IMAGE_TYPES:
                return item.path
            item = self.manifest.get(item.fallback)
        if first is not None and first.path.lower().endswith(PICTURE_SUFFIXES):
            return first.path  # "image/jpg", "", octet-stream…: the view decides
        return None


def _kind(item: Item) -> str:
    if item.media_type in HTML_TYPES or (
        not item.media_type and item.path.lower().endswith(HTML_SUFFIXES)
    ):
        return "html"
    if item.media_type == SVG_TYPE:
        return "svg"
    if item.media_type in IMAGE_TYPES:
        return "image"
    return ""


def _resolve(base: str, href: str) -> str | None:
    """A manifest href as a path in the archive, clamped at the container root as a
    browser clamps ``..`` at the origin; ``/path`` starts at the root."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    raw = unquote(parts.path)
    joined = raw if raw.startswith("/") else posixpath.join("/" + base, raw)
    path = posixpath.normpath(joined).lstrip("/")
    return path or None


def read_package(opf: ET.Element, opf_path: str, arc: EpubArchive) -> Package:
    base = posixpath.dirname(opf_path)
    pkg = Package(base)
    manifest_el = next((c for c in opf if _local(c.tag) == "manifest"), None)
    spine_el = next((c for c in opf if _local(c.tag) == "spine"), None)
    for item in manifest_el if manifest_el is not None else ():
        if _local(item.tag) != "item":
            continue
        full = _resolve(base, item.get("href", ""))
        if full is not None:
            pkg.manifest[item.get("id", "")] = Item(
                full,
                item.get("media-type", ""),
                item.get("properties", ""),
                item.get("fallback", ""),
            )
            pkg.listed.add(full)
            pkg.by_path.setdefault(full, pkg.manifest[item.get("id", "")])
    later: list[SpineDoc] = []
    for ref in spine_el if spine_el is not None else ():
        if _local(ref.tag) != "itemref":
            continue
        doc = _spine_doc(pkg, ref.get("idref", ""), arc)
        if doc is None:
            skipped = pkg.manifest.get(ref.get("idref", ""))
            if skipped is not None:
                pkg.unreadable.append(skipped.media_type or posixpath.splitext(skipped.path)[1])
            continue
        if ref.get("linear", "yes").strip().lower() == "no":
            # kept, after the main flow: reachable by its links and listed last
            later.append(SpineDoc(doc.path, doc.kind, False, doc.text_from))
        else:
            pkg.spine.append(doc)
    pkg.spine.extend(later)
    return pkg


def _spine_doc(pkg: Package, idref: str, arc: EpubArchive) -> SpineDoc | None:
    """Follow a spine item's fallback chain to something Margin can show: an (X)HTML
    document first, then an SVG document, then an image (with an XHTML fallback further
    down the chain as its text)."""
    chain: list[Item] = []
    item = pkg.manifest.get(idref)
    while item is not None and item not in chain and len(chain) < 16:
        chain.append(item)
        item = pkg.manifest.get(item.fallback)
    usable = [(i, _kind(i)) for i in chain if arc.has(i.path)]
    html = next((i for i, k in usable if k == "html"), None)
    first = next(((i, k) for i, k in usable if k), None)
    if first is None:
        return None
    if first[1] == "html":
        return SpineDoc(first[0].path, "html")
    return SpineDoc(first[0].path, first[1], text_from=html.path if html is not None else "")


def _dir(el: ET.Element, root_dir: str) -> str:
    own = (el.get("dir") or "").lower()
    return own if own in ("rtl", "ltr", "auto") else root_dir


def directed(el: ET.Element | None, root_dir: str) -> str:
    """An element's text, whitespace collapsed, isolated right-to-left when it (or the
    package, when it says nothing) is ``dir="rtl"``."""
    text = _text(el)
    if text and el is not None and _dir(el, root_dir) == "rtl":
        return f"{RLI}{text}{PDI}"
    return text


CODES = frozenset({"language", "identifier", "date"})
"""Metadata that is a code, never prose: no text direction applies (a package ``dir="rtl"``
once wrapped the language "ar" in bidi isolates, so it matched no language)."""


def first_meta(opf: ET.Element, name: str) -> str:
    metadata = next((c for c in opf if _local(c.tag) == "metadata"), None)
    root_dir = (opf.get("dir") or "").lower()
    for el in metadata if metadata is not None else ():
        if _local(el.tag) == name and _text(el):
            return _text(el) if name in CODES else directed(el, root_dir)
    return ""


def progression(opf: ET.Element) -> str:
    spine_el = next((c for c in opf if _local(c.tag) == "spine"), None)
    value = (spine_el.get("page-progression-direction") if spine_el is not None else "") or ""
    return value if value in ("ltr", "rtl") else ""

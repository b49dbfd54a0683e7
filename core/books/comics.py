"""Books whose pages are pictures: comic archives (CBZ: a zip of images, with an optional
ComicInfo.xml) and pre-paginated or image-only EPUBs (fixed-layout comics, picture books).

Each page is one picture. Its stored HTML names the picture inside the book file
(``<img class="margin-page" src="book:/path">``) and the reading direction; its text is
whatever words the page document holds (usually none: the assistant cannot read pictures).
The window draws these pages with ``desktop/reader/image_pages.py``.
"""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from core.books.epubzip import (  # the zip, its safety checks
    EpubArchive,
    _check_drm,
    _find_opf,
    _xml,
)
from core.books.htmlblocks import resolve_relative
from core.books.limits import DEFAULT_LIMITS, Limits, too_large
from core.books.model import BookFormat, PageContent, ParsedBook
from core.errors import BookCode, BookError
from core.progress import ProgressCallback, no_progress

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".avif", ".jxl")
MARKER = '<img class="margin-page"'
_NUMBER = re.compile(r"(\d+)")
_TAG = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


SIDES = ("left", "right", "center")  # where a page goes in a spread (EPUB page-spread-*)


def page_html(image: str, rtl: bool, side: str = "") -> str:
    direction = "rtl" if rtl else "ltr"
    spread = f' data-spread="{side}"' if side in SIDES else ""
    return f'{MARKER} src="book:/{html.escape(image)}" data-progression="{direction}"{spread}>'


def spread_side(properties: str) -> str:
    """Where an EPUB spine item asks to be in a two-page spread: "left", "right", "center"
    (alone, in the middle: ``page-spread-center`` or ``rendition:spread-none``), or ""."""
    for prop in properties.split():
        name = prop.removeprefix("rendition:")
        if name in ("page-spread-left", "page-spread-right", "page-spread-center"):
            return name.removeprefix("page-spread-")
        if name == "spread-none":
            return "center"
    return ""


def pair_pages(sides: list[str], rtl: bool) -> list[tuple[int, ...]]:
    """The two-page spreads of a book (1-based pages, reading order) from each page's spread
    side (``sides``; "" for none). Without hints: the cover alone, then (2, 3), (4, 5)…
    A page asking for the side a spread starts on (left, or right when pages turn right to
    left) opens a pair; one asking for the other side ends it, alone when the page before
    could not open it; a centred page is alone."""
    closes = "left" if rtl else "right"  # the side a pair ends on
    out: list[tuple[int, ...]] = []
    page, count = 1, len(sides)
    while page <= count:
        side = sides[page - 1]
        if side in (closes, "center") or (page == 1 and not side):
            out.append((page,))
            page += 1
        elif page < count and sides[page] in ("", closes):
            out.append((page, page + 1))
            page += 2
        else:
            out.append((page,))
            page += 1
    return out


def side_of(stored_html: str) -> str:
    """The spread side a stored image page asks for ("" when none)."""
    found = re.search(r'data-spread="(left|right|center)"', stored_html)
    return found.group(1) if found else ""


def is_image_page(stored_html: str | None) -> bool:
    return bool(stored_html) and stored_html.startswith(MARKER)  # type: ignore[union-attr]


def image_of(stored_html: str) -> tuple[str, bool]:
    """(the picture's path inside the book file, right to left) of a stored image page."""
    src = re.search(r'src="book:/([^"]*)"', stored_html)
    rtl = 'data-progression="rtl"' in stored_html
    return (html.unescape(src.group(1)) if src else "", rtl)


def _natural(name: str) -> list[object]:
    return [int(p) if p.isdigit() else p.lower() for p in _NUMBER.split(name)]


def _comic_info(data: bytes) -> dict[str, str]:
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return {}
    return {el.tag: (el.text or "").strip() for el in root if isinstance(el.tag, str)}


def parse_cbz(
    path: Path, *, progress: ProgressCallback = no_progress, limits: Limits = DEFAULT_LIMITS
) -> ParsedBook:
    """A zip of pictures, in the natural order of their names (``page2`` before ``page10``).
    ComicInfo.xml gives the title, the writer and the direction (``Manga`` =
    ``YesAndRightToLeft``: pages turn right to left)."""
    arc = EpubArchive(path, limits)
    try:
        progress(0.2, "Reading the pages")
        names = sorted(
            (
                n
                for n in arc.entries
                if n.lower().endswith(IMAGE_SUFFIXES)
                and not any(p.startswith((".", "__MACOSX")) for p in n.split("/"))
                and arc.entries[n].file_size > 0
            ),
            key=_natural,
        )
        info_name = next((n for n in arc.entries if n.lower().endswith("comicinfo.xml")), None)
        info = _comic_info(arc.read(info_name)) if info_name else {}
    finally:
        arc.close()
    if not names:
        raise BookError(
            BookCode.EMPTY,
            f"{path.name} has no pictures in it (a comic archive is a zip of images).",
            hint="Check that the file is a CBZ comic; CBR (RAR) archives are not read yet.",
        )
    if len(names) > limits.max_pages:
        raise too_large(path, f"it has {len(names):,} pages, more than {limits.max_pages:,}")
    rtl = info.get("Manga", "").lower() == "yesandrighttoleft"
    pages = tuple(
        PageContent(number=i + 1, label=str(i + 1), text="", html=page_html(name, rtl))
        for i, name in enumerate(names)
    )
    title = info.get("Title") or info.get("Series") or path.stem.replace("_", " ")
    if info.get("Series") and info.get("Number") and info.get("Title"):
        title = f"{info['Series']} {info['Number']}: {info['Title']}"
    progress(1.0, "Read")
    return ParsedBook(
        format=BookFormat.CBZ,
        title=title,
        author=info.get("Writer", ""),
        language=info.get("LanguageISO", ""),
        pages=pages,
        toc=(),
        extra={"progression": "rtl" if rtl else "ltr"},
    )


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _first_image(doc: bytes) -> str:
    """The first picture a page document shows: ``<img src>``, or SVG ``<image href>``."""
    text = doc.decode("utf-8", errors="replace")
    found = re.search(r"<img\b[^>]*?\bsrc\s*=\s*[\"']([^\"']+)[\"']", text, re.I) or re.search(
        r"<(?:svg:)?image\b[^>]*?\b(?:xlink:)?href\s*=\s*[\"']([^\"']+)[\"']", text, re.I
    )
    return html.unescape(found.group(1)) if found else ""


def _words(doc: bytes) -> str:
    text = doc.decode("utf-8", errors="replace")
    body = re.search(r"<body\b.*?</body>", text, re.I | re.S)
    words = _SPACE.sub(" ", html.unescape(_TAG.sub(" ", body.group(0) if body else ""))).strip()
    return words


def image_epub(arc: EpubArchive, *, only_pre_paginated: bool = True) -> ParsedBook | None:
    """An EPUB read as picture pages, or None when it is not a picture book.

    ``only_pre_paginated``: only a book whose package says ``rendition:layout`` is
    ``pre-paginated`` and whose every page document shows a picture with few words (a
    fixed-layout comic). Otherwise (called after the text reader found no text) any book
    whose page documents show pictures."""
    path = arc.path
    _check_drm(arc)  # encrypted pictures are no pages to show
    opf_path = _find_opf(arc)
    opf = _xml(arc.read(opf_path), path, "package file")
    base = posixpath.dirname(opf_path)
    metadata = next((c for c in opf if _local(c.tag) == "metadata"), None)
    manifest_el = next((c for c in opf if _local(c.tag) == "manifest"), None)
    spine_el = next((c for c in opf if _local(c.tag) == "spine"), None)
    if metadata is None or manifest_el is None or spine_el is None:
        return None
    layout = next(
        (
            (el.text or "").strip()
            for el in metadata
            if _local(el.tag) == "meta" and el.get("property") == "rendition:layout"
        ),
        "",
    )
    if only_pre_paginated and layout != "pre-paginated":
        return None
    manifest = {
        item.get("id", ""): (
            resolve_relative(base, item.get("href", "")),
            item.get("media-type", ""),
        )
        for item in manifest_el
        if _local(item.tag) == "item" and item.get("href")
    }
    rtl = spine_el.get("page-progression-direction", "") == "rtl"
    pictures: list[tuple[str, str, str]] = []  # (picture, words, spread side)
    for ref in spine_el:
        if _local(ref.tag) != "itemref":
            continue
        target, media = manifest.get(ref.get("idref", ""), (None, ""))
        if not target or not arc.has(target):
            continue
        side = spread_side(ref.get("properties", ""))
        if media.startswith("image/"):
            pictures.append((target, "", side))
            continue
        doc = arc.read(target)
        src = _first_image(doc)
        image = resolve_relative(posixpath.dirname(target), src) if src else None
        words = _words(doc)
        if not image or not arc.has(image):
            if words:
                return None  # a page of text: not a picture book
            # a blank page: kept, so the spreads after it pair as in the printed book
            pictures.append(("", "", side))
            continue
        if only_pre_paginated and len(words) > 400:
            return None  # a fixed-layout book of text: read as text
        pictures.append((image, words, side))
    if not any(picture for picture, _, _ in pictures):
        return None
    title = next(
        ((el.text or "").strip() for el in metadata if _local(el.tag) == "title" and el.text),
        path.stem,
    )
    author = next(
        ((el.text or "").strip() for el in metadata if _local(el.tag) == "creator" and el.text),
        "",
    )
    language = next(
        ((el.text or "").strip() for el in metadata if _local(el.tag) == "language" and el.text),
        "",
    )
    pages = tuple(
        PageContent(number=i + 1, label=str(i + 1), text=words, html=page_html(image, rtl, side))
        for i, (image, words, side) in enumerate(pictures)
    )
    return ParsedBook(
        format=BookFormat.EPUB,
        title=title,
        author=author,
        language=language,
        pages=pages,
        toc=(),
        extra={"progression": "rtl" if rtl else "ltr"},
    )


def cbz_cover_bytes(path: Path, *, max_bytes: int = 20 * 1024 * 1024) -> bytes | None:
    """The first picture of a comic archive (its cover), or None."""
    try:
        book = parse_cbz(path)
    except BookError:
        return None
    first = image_of(book.pages[0].html or "")[0]
    arc = EpubArchive(path)
    try:
        info = arc.entries.get(first)
        if info is None or info.file_size > max_bytes:
            return None
        return arc.read(first)
    except BookError:
        return None
    finally:
        arc.close()

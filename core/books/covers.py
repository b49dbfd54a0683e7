"""Book covers without Qt: where an EPUB keeps its cover image, where covers are cached, and
the colour of a generated cover.

The EPUB is untrusted, so it is read through ``EpubArchive`` (entry-count, size and
compression-ratio checks, no names that leave the archive, no XML entities) and the image
itself is capped at ``MAX_COVER_BYTES``. Anything odd means "no cover": the caller then draws
one, so a broken cover never stops a book from being listed.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING

from core.books.cover_names import COVERS_VERSION as COVERS_VERSION  # (moved there)
from core.books.cover_names import MAX_COVER_PIXELS as MAX_COVER_PIXELS
from core.books.cover_names import cover_colour as cover_colour
from core.books.cover_names import cover_file as cover_file
from core.books.limits import DEFAULT_LIMITS, Limits
from core.errors import BookError

if TYPE_CHECKING:  # the EPUB reader loads when a cover is made, not with the library view
    from xml.etree.ElementTree import Element

    from core.books.epub import EpubArchive

MAX_COVER_BYTES = 8 * 1024 * 1024
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp")
_IMG_SRC = re.compile(rb"""<(?:img|image)\b[^>]*?(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)


_MAGIC = (
    (b"\xff\xd8\xff", "jpeg"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"BM", "bmp"),
)


def image_kind(data: bytes) -> str | None:
    """The raster format the bytes really hold ("jpeg", "png", "gif", "webp", "bmp"), read
    from their first bytes, never from a name or a media type; None for anything else (SVG,
    HTML, damaged data), which is never drawn: an SVG can pull in other files."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None


def _is_image(name: str, media_type: str) -> bool:
    if media_type:
        return media_type.startswith("image/")
    return name.lower().endswith((*IMAGE_SUFFIXES, ".svg"))


_SVG_NS = "http://www.w3.org/2000/svg"
_XLINK_NS = "http://www.w3.org/1999/xlink"
_SAFE_HREF = re.compile(r"^(#|data:image/(png|jpeg|jpg|gif|webp);base64,)", re.I)
_UNSAFE_TAGS = ("script", "foreignObject", "iframe", "object", "embed", "audio", "video")


def safe_svg(data: bytes) -> bytes | None:
    """An SVG cover (Standard Ebooks' are) made safe to draw: no DOCTYPE or entities, no
    script or foreign content, and no reference to anything outside it (an ``<image>`` or
    ``<use>`` may only point inside the file or hold a picture inline as a data URL); None
    when it is no SVG or cannot be read. An SVG that could pull in other files is never drawn
    as it came."""
    import xml.etree.ElementTree as ET

    head = data[:2048].lstrip()
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data or b"<svg" not in head + data[:4096]:
        return None
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    if root.tag != f"{{{_SVG_NS}}}svg":
        return None
    for parent in list(root.iter()):
        for child in list(parent):
            tag = child.tag.rsplit("}", 1)[-1] if isinstance(child.tag, str) else ""
            hrefs = [v for k, v in child.attrib.items() if k.rsplit("}", 1)[-1] == "href"]
            if tag in _UNSAFE_TAGS or any(not _SAFE_HREF.match(h.strip()) for h in hrefs):
                parent.remove(child)
    texts = [v for e in root.iter() for v in (*e.attrib.values(), e.text or "")]
    if any(re.search(r"url\((?!\s*['\"]?#)|@import", v) for v in texts):
        return None  # a style that would fetch something
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", _XLINK_NS)
    return ET.tostring(root, encoding="utf-8")


def _cover_candidates(arc: EpubArchive) -> list[str]:
    """Archive names that may hold the cover image, best first."""
    from core.books.epubzip import _find_opf, _local, _xml
    from core.books.htmlblocks import resolve_relative

    opf_path = _find_opf(arc)
    opf = _xml(arc.read(opf_path), arc.path, "package file")
    base = posixpath.dirname(opf_path)
    manifest: dict[str, tuple[str, str, str]] = {}
    by_name: dict[str, str] = {}
    metadata: Element | None = None
    guide: Element | None = None
    for child in opf:
        tag = _local(child.tag)
        if tag == "metadata":
            metadata = child
        elif tag == "guide":
            guide = child
        elif tag == "manifest":
            for item in child:
                if _local(item.tag) != "item":
                    continue
                full = resolve_relative(base, item.get("href", ""))
                if full is None:
                    continue
                entry = (full, item.get("media-type", "").lower(), item.get("properties", ""))
                manifest[item.get("id", "")] = entry
                by_name[full] = entry[1]
    out: list[str] = []
    # EPUB 3: properties="cover-image"
    out += [
        name
        for name, media, props in manifest.values()
        if "cover-image" in props.split() and _is_image(name, media)
    ]
    # EPUB 2: <meta name="cover" content="manifest id"> (some books put a path there)
    if metadata is not None:
        for el in metadata.iter():
            if _local(el.tag) == "meta" and el.get("name", "").lower() == "cover":
                ref = el.get("content", "")
                if ref in manifest and _is_image(manifest[ref][0], manifest[ref][1]):
                    out.append(manifest[ref][0])
                else:
                    name = resolve_relative(base, ref) if ref else None
                    if name and _is_image(name, by_name.get(name, "")):
                        out.append(name)
    # the guide's cover: an image, or a page whose first image is the cover
    if guide is not None:
        for reference in guide:
            if _local(reference.tag) != "reference" or reference.get("type", "").lower() != "cover":
                continue
            target = resolve_relative(base, reference.get("href", "").split("#")[0])
            if not target or not arc.has(target):
                continue
            if _is_image(target, by_name.get(target, "")):
                out.append(target)
                continue
            if arc.entries[target].file_size > 1024 * 1024:
                continue  # a cover page is small; a big one is not worth reading for this
            match = _IMG_SRC.search(arc.read(target))
            if match:
                src = match.group(1).decode("utf-8", errors="replace")
                image = resolve_relative(posixpath.dirname(target), src)
                if image:
                    out.append(image)
    # last resort: an image whose manifest id or name says "cover"
    out += [
        name
        for item_id, (name, media, _props) in manifest.items()
        if _is_image(name, media) and ("cover" in item_id.lower() or "cover" in name.lower())
    ]
    return list(dict.fromkeys(out))


def epub_cover_bytes(
    path: Path, *, limits: Limits = DEFAULT_LIMITS, max_bytes: int = MAX_COVER_BYTES
) -> bytes | None:
    """The bytes of the EPUB's cover image, or None when it has none (or only an unsafe,
    missing or oversized one, or one that is not really a raster image, whatever its label,
    nor an SVG named so, made safe by ``safe_svg``). Raises ``BookError`` only when the file
    is not a usable EPUB."""
    from core.books.epub import EpubArchive

    arc = EpubArchive(path, limits)
    try:
        try:
            candidates = _cover_candidates(arc)
        except BookError:
            return None  # a damaged package file: the book gets a generated cover
        for name in candidates:
            info = arc.entries.get(name)
            if info is None or info.file_size > max_bytes or info.file_size == 0:
                continue
            try:
                data = arc.read(name)
            except BookError:
                continue
            if image_kind(data) is not None:
                return data
            svg = safe_svg(data) if name.lower().endswith(".svg") else None
            if svg is not None:  # an SVG cover said to be one (never one labelled PNG)
                return svg
        return None
    finally:
        arc.close()

"""EPUB 2 and 3: container → OPF → spine, metadata, table of contents, chapter text.

The archive is untrusted. Sizes and compression ratios are checked from the zip directory
before anything is decompressed and enforced again while reading; names with ``..`` or an
absolute path are never read; XML with entity declarations is refused (billion laughs);
chapter XHTML goes through the HTML parser, which has no entity expansion or network access.
"""

from __future__ import annotations

import posixpath
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

from core.books.htmlblocks import TITLE_CHARS, clean_title, html_document, resolve_relative
from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.books.model import Block, BookFormat, Chapter, ParsedBook, TocAnchor, TocItem
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress

NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "xhtml": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
    "enc": "urn:oasis:names:tc:opendocument:xmlns:container",
}
FONT_OBFUSCATION = (
    "http://www.idpf.org/2008/embedding",
    "http://ns.adobe.com/pdf/enc#RC",
)
_ENTITY = re.compile(rb"<!ENTITY", re.I)


class EpubArchive:
    """A zip opened with the safety checks; ``read(name)`` returns the bytes of one entry."""

    def __init__(self, path: Path, limits: Limits = DEFAULT_LIMITS) -> None:
        self.path = path
        self.limits = limits
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, ValueError, EOFError, NotImplementedError, struct.error):
            raise BookError(
                BookCode.CORRUPT,
                f"{path.name} is damaged: it is not a valid EPUB (zip) file.",
                hint="Download the book again, or export it again from the program that made it.",
            ) from None
        except OSError as exc:
            raise BookError(
                BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
            ) from None
        infos = self.zip.infolist()
        if len(infos) > limits.max_entry_count:
            raise too_large(path, f"it holds more than {limits.max_entry_count:,} files")
        total = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            if (
                name.startswith(("/", "\\"))
                or ".." in name.split("/")
                or re.match(r"^[A-Za-z]:", name)
            ):
                continue  # never read outside the archive; such entries are simply ignored
            total += info.file_size
            if (
                info.compress_size
                and info.file_size / max(info.compress_size, 1) > limits.max_compression_ratio
                and info.file_size > 1024 * 1024
            ):
                raise too_large(
                    path,
                    f"one of its files expands {info.file_size // max(info.compress_size, 1)} times when unpacked (a zip bomb?)",
                )
            self.entries[name] = info
        if total > limits.max_uncompressed_bytes:
            raise too_large(
                path,
                f"it unpacks to {human_size(total)}, more than {human_size(limits.max_uncompressed_bytes)}",
            )

    def close(self) -> None:
        self.zip.close()

    def has(self, name: str) -> bool:
        return name in self.entries

    def read(self, name: str) -> bytes:
        info = self.entries.get(name)
        if info is None:
            raise BookError(
                BookCode.CORRUPT,
                f"{self.path.name} is damaged: it refers to a missing file {name!r}.",
            )
        cap = min(info.file_size, self.limits.max_uncompressed_bytes) + 1
        try:
            with self.zip.open(info) as fh:
                data = fh.read(cap)
        except (
            zipfile.BadZipFile,
            OSError,
            EOFError,
            RuntimeError,
            ValueError,
            NotImplementedError,
            zlib.error,
        ) as exc:
            raise BookError(
                BookCode.CORRUPT, f"{self.path.name} is damaged: {name} cannot be unpacked ({exc})."
            ) from None
        if len(data) > info.file_size:
            raise too_large(self.path, f"{name} is larger than its archive entry says")
        return data


def _xml(data: bytes, path: Path, what: str) -> ET.Element:
    if _ENTITY.search(data[:65536]):
        raise BookError(
            BookCode.CORRUPT,
            f"{path.name} is damaged or hostile: its {what} declares XML entities.",
        )
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise BookError(
            BookCode.CORRUPT, f"{path.name} is damaged: its {what} is not valid XML ({exc})."
        ) from None


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _find_opf(arc: EpubArchive) -> str:
    if arc.has("META-INF/container.xml"):
        root = _xml(arc.read("META-INF/container.xml"), arc.path, "container.xml")
        for el in root.iter():
            if _local(el.tag) == "rootfile" and el.get("full-path"):
                return el.get("full-path", "")
    candidates = [n for n in arc.entries if n.lower().endswith(".opf")]
    if candidates:
        return sorted(candidates)[0]
    raise BookError(
        BookCode.CORRUPT, f"{arc.path.name} is not a valid EPUB: it has no package (OPF) file."
    )


def _check_drm(arc: EpubArchive) -> None:
    if arc.has("META-INF/rights.xml") and not arc.has("META-INF/encryption.xml"):
        pass
    if not arc.has("META-INF/encryption.xml"):
        return
    root = _xml(arc.read("META-INF/encryption.xml"), arc.path, "encryption.xml")
    for data in root.iter():
        if _local(data.tag) != "EncryptedData":
            continue
        method = ""
        uri = ""
        for el in data.iter():
            if _local(el.tag) == "EncryptionMethod":
                method = el.get("Algorithm", "")
            if _local(el.tag) == "CipherReference":
                uri = el.get("URI", "")
        is_font = uri.lower().endswith((".ttf", ".otf", ".woff", ".woff2"))
        if method in FONT_OBFUSCATION and is_font:
            continue
        if is_font:
            continue
        raise BookError(
            BookCode.DRM,
            f"{arc.path.name} is DRM-protected: its text is encrypted, so Margin cannot read it.",
            hint="Open it in the app of the shop that sold it, or use a DRM-free copy.",
        )


def _text(el: ET.Element | None) -> str:
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


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
                    entry = _entry(link.text(), level, base, link.attributes.get("href") or "")
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


def _is_heading(block: Block) -> bool:
    return block.kind[0] == "h" and block.kind[1:].isdigit()


def _has_content(block: Block) -> bool:
    """Text, or an image (an illustration or a frontispiece is part of the book)."""
    return bool(block.text) or block.kind == "img"


def _is_cover(doc: str, blocks: list[Block]) -> bool:
    """An image-only document that is the book's cover (by its name or its image's)."""
    if any(b.text and b.kind != "img" for b in blocks):
        return False
    return "cover" in doc.lower() or all("cover" in b.html.lower() for b in blocks)


def _is_boilerplate(title: str, block: Block | None) -> bool:
    """A contents "title" that is really a paragraph: far longer than any heading, and the
    element it points at is not a heading."""
    if len(title) <= TITLE_CHARS:
        return False
    return block is None or not _is_heading(block)


def parse_epub(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedBook:
    arc = EpubArchive(path, limits)
    try:
        from core.books.comics import image_epub  # pre-paginated and image-only books

        pictures = image_epub(arc)
        if pictures is not None:
            return pictures
        try:
            return _parse(arc, progress, cancel)
        except BookError as exc:
            pictures = image_epub(arc, only_pre_paginated=False) if exc.code == "empty" else None
            if pictures is None:
                raise
            return pictures
    finally:
        arc.close()


def _parse(arc: EpubArchive, progress: ProgressCallback, cancel: CancelToken | None) -> ParsedBook:
    path = arc.path
    _check_drm(arc)
    opf_path = _find_opf(arc)
    opf = _xml(arc.read(opf_path), path, "package file")
    base = posixpath.dirname(opf_path)
    metadata = next((c for c in opf if _local(c.tag) == "metadata"), None)
    manifest_el = next((c for c in opf if _local(c.tag) == "manifest"), None)
    spine_el = next((c for c in opf if _local(c.tag) == "spine"), None)
    if manifest_el is None or spine_el is None:
        raise BookError(
            BookCode.CORRUPT,
            f"{path.name} is not a valid EPUB: its package file has no manifest or spine.",
        )

    def meta(name: str) -> str:
        if metadata is None:
            return ""
        for el in metadata:
            if _local(el.tag) == name and _text(el):
                return _text(el)
        return ""

    manifest: dict[str, tuple[str, str, str]] = {}
    for item in manifest_el:
        if _local(item.tag) != "item":
            continue
        href = item.get("href", "")
        full = resolve_relative(base, href) if href else None
        if full is not None:
            manifest[item.get("id", "")] = (
                full,
                item.get("media-type", ""),
                item.get("properties", ""),
            )

    spine: list[str] = []
    for ref in spine_el:
        if _local(ref.tag) != "itemref" or ref.get("linear", "yes").lower() == "no":
            continue
        ref_item = manifest.get(ref.get("idref", ""))
        if (
            ref_item
            and ref_item[1]
            in (
                "application/xhtml+xml",
                "text/html",
                "application/x-dtbook+xml",
                "",
            )
        ) or (ref_item and ref_item[0].lower().endswith((".xhtml", ".html", ".htm"))):
            spine.append(ref_item[0])

    toc_entries: list[_Entry] = []
    nav = next((v[0] for v in manifest.values() if "nav" in v[2].split()), None)
    try:
        if nav and arc.has(nav):
            toc_entries = _nav_toc(arc, nav)
        if not toc_entries:
            ncx_id = spine_el.get("toc", "")
            ncx = manifest.get(ncx_id, (None,))[0] or next(
                (v[0] for v in manifest.values() if v[1] == "application/x-dtbncx+xml"), None
            )
            if ncx and arc.has(ncx):
                toc_entries = _ncx_toc(arc, ncx)
    except BookError:
        raise
    except Exception:
        toc_entries = []  # a broken table of contents should not stop the book from opening

    wanted: dict[str, set[str]] = {}
    entries_of_doc: dict[str, list[int]] = {}
    for number, entry in enumerate(toc_entries):
        entries_of_doc.setdefault(entry.doc, []).append(number)
        if entry.fragment:
            wanted.setdefault(entry.doc, set()).add(entry.fragment)

    chapters: list[Chapter] = []
    chapter_of_doc: dict[str, int] = {}
    chapter_at: dict[tuple[str, str], tuple[int, int]] = {}  # (chapter, block in it)
    dropped: set[int] = set()  # contents entries that are boilerplate, not headings
    ref_labels: dict[str, str] = {}  # note references seen so far: target → label
    total = max(len(spine), 1)
    for i, doc in enumerate(spine):
        if cancel is not None:
            cancel.check()
        progress(i / total, f"Reading chapter {i + 1} of {total}")
        if not arc.has(doc):
            continue
        doc_dir = posixpath.dirname(doc)

        def resolve_image(src: str, doc_dir: str = doc_dir) -> str | None:
            target = resolve_relative(doc_dir, src)
            return f"book:/{target}" if target and arc.has(target) else None

        title, blocks, anchors = html_document(
            arc.read(doc),
            resolve_image,
            frozenset(wanted.get(doc, ())),
            doc=doc,
            ref_labels=ref_labels,
        )
        for block in blocks:
            if len(block.text) > arc.limits.max_paragraph_chars:
                raise too_large(
                    path,
                    f"one paragraph is longer than {arc.limits.max_paragraph_chars:,} characters",
                )
        if not any(_has_content(b) for b in blocks):
            continue  # empty documents add nothing to read (an image-only one is a page)
        if _is_cover(doc, blocks) and doc not in entries_of_doc:
            continue  # the cover is the book's picture in the library, not a page to read
        # Contents entries that point inside this document start chapters of their own, so
        # each entry's page is the page its heading is on. A long entry pointing at a
        # paragraph (Gutenberg's boilerplate first entry) is not a heading: it is dropped.
        starts: dict[int, list[str]] = {}
        for number in entries_of_doc.get(doc, ()):
            entry = toc_entries[number]
            index = anchors.get(entry.fragment) if entry.fragment else None
            at = index if index is not None else 0
            if _is_boilerplate(entry.title, blocks[at] if at < len(blocks) else None):
                dropped.add(number)
            elif index is not None:
                starts.setdefault(index, []).append(entry.fragment)
        cuts = sorted({0, *starts})
        segments = [
            (cut, blocks[cut : cuts[n + 1] if n + 1 < len(cuts) else len(blocks)])
            for n, cut in enumerate(cuts)
        ]
        # A part that is only headings (a story title right before its "I.") or has no
        # text shares the next part's chapter and page, so no page is a lone heading.
        pending: list[tuple[str, int]] = []  # (fragment, block offset in the chapter)
        carried: list[Block] = []
        first = len(chapters)
        for n, (cut, part) in enumerate(segments):
            pending.extend((fragment, len(carried)) for fragment in starts.get(cut, []))
            part = carried + part
            last_part = n + 1 == len(segments)
            if not last_part and all(_is_heading(b) or not _has_content(b) for b in part):
                carried = part
                continue
            if not any(_has_content(b) for b in part):
                carried = part  # only at the end of the document: joins the chapter before
                break
            carried = []
            heading = next((b.text for b in part if b.kind in ("h1", "h2", "h3")), "")
            for fragment, offset in pending:
                chapter_at[(doc, fragment)] = (len(chapters), offset)
            pending = []
            chapters.append(
                Chapter(clean_title(heading or title or f"Part {len(chapters) + 1}"), tuple(part))
            )
        if carried and len(chapters) > first:
            last = chapters[-1]
            chapters[-1] = Chapter(last.title, last.blocks + tuple(carried))
            for fragment, offset in pending:
                chapter_at[(doc, fragment)] = (len(chapters) - 1, len(last.blocks) + offset)
        chapter_of_doc[doc] = first

    if not chapters:
        raise BookError(
            BookCode.EMPTY, f"{path.name} has no readable text (it may contain only images)."
        )

    toc: list[TocItem] = []
    for number, entry in enumerate(toc_entries):
        target = entry.doc
        if number in dropped:
            continue
        at_block: int | None = None
        chapter = chapter_of_doc.get(target)
        if (target, entry.fragment) in chapter_at:
            chapter, offset = chapter_at[(target, entry.fragment)]
            at_block = offset or None
        if chapter is None:
            # a toc entry pointing at a skipped document goes to the next readable one
            later = (
                [chapter_of_doc[d] for d in spine[spine.index(target) :] if d in chapter_of_doc]
                if target in spine
                else []
            )
            if not later:
                continue
            chapter = later[0]
        toc.append(
            TocAnchor(clean_title(entry.title), entry.level, chapter=chapter, block=at_block)
        )
    if not toc:
        toc = [TocItem(c.title, 1, chapter=i) for i, c in enumerate(chapters)]

    language = meta("language")
    return ParsedBook(
        format=BookFormat.EPUB,
        title=meta("title") or path.stem,
        author=meta("creator"),
        language=language,
        chapters=tuple(chapters),
        toc=tuple(toc),
    )


def read_resource(epub_path: Path, name: str, *, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Bytes of one file inside the EPUB (an image the reader shows). ``name`` is the path
    inside the archive, with or without a leading slash; anything escaping it is refused."""
    clean = posixpath.normpath(unquote(name).lstrip("/"))
    if clean.startswith(("..", "/")) or clean in ("", "."):
        raise BookError(BookCode.NOT_FOUND, f"{name!r} is not a file inside {epub_path.name}.")
    arc = EpubArchive(epub_path, limits)
    try:
        if not arc.has(clean):
            raise BookError(BookCode.NOT_FOUND, f"{name!r} is not a file inside {epub_path.name}.")
        return arc.read(clean)
    finally:
        arc.close()

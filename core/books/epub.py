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
from urllib.parse import unquote, urlsplit
from xml.etree import ElementTree as ET

from core.books.htmlblocks import html_to_blocks, resolve_relative
from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.books.model import BookFormat, Chapter, ParsedBook, TocItem
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


def _nav_toc(arc: EpubArchive, nav_path: str) -> list[tuple[str, int, str]]:
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
    out: list[tuple[str, int, str]] = []

    def walk(ol: object, level: int) -> None:
        node = getattr(ol, "child", None)
        while node is not None:
            if node.tag == "li":
                link = node.css_first("a") or node.css_first("span")
                if link is not None:
                    title = " ".join(link.text().split())
                    href = link.attributes.get("href") or ""
                    target = resolve_relative(base, href.split("#")[0]) if href else None
                    if title and target:
                        out.append((title, level, target))
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


def _ncx_toc(arc: EpubArchive, ncx_path: str) -> list[tuple[str, int, str]]:
    root = _xml(arc.read(ncx_path), arc.path, "table of contents (NCX)")
    base = posixpath.dirname(ncx_path)
    out: list[tuple[str, int, str]] = []

    def walk(parent: ET.Element, level: int) -> None:
        for point in parent:
            if _local(point.tag) != "navPoint":
                continue
            label = next((c for c in point if _local(c.tag) == "navLabel"), None)
            content = next((c for c in point if _local(c.tag) == "content"), None)
            title = _text(label)
            src = content.get("src", "") if content is not None else ""
            target = resolve_relative(base, src.split("#")[0]) if src else None
            if title and target:
                out.append((title, level, target))
            walk(point, level + 1)

    nav_map = next((c for c in root if _local(c.tag) == "navMap"), None)
    if nav_map is not None:
        walk(nav_map, 1)
    return out


def parse_epub(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedBook:
    arc = EpubArchive(path, limits)
    try:
        return _parse(arc, progress, cancel)
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
        entry = manifest.get(ref.get("idref", ""))
        if (
            entry
            and entry[1]
            in (
                "application/xhtml+xml",
                "text/html",
                "application/x-dtbook+xml",
                "",
            )
        ) or (entry and entry[0].lower().endswith((".xhtml", ".html", ".htm"))):
            spine.append(entry[0])

    toc_entries: list[tuple[str, int, str]] = []
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

    chapters: list[Chapter] = []
    chapter_of_doc: dict[str, int] = {}
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

        title, blocks = html_to_blocks(arc.read(doc), resolve_image)
        for block in blocks:
            if len(block.text) > arc.limits.max_paragraph_chars:
                raise too_large(
                    path,
                    f"one paragraph is longer than {arc.limits.max_paragraph_chars:,} characters",
                )
        if not any(b.text for b in blocks):
            continue  # image-only cover pages and empty documents add nothing to read
        chapter_of_doc[doc] = len(chapters)
        heading = next((b.text for b in blocks if b.kind in ("h1", "h2", "h3")), "")
        chapters.append(Chapter(heading or title or f"Part {len(chapters) + 1}", tuple(blocks)))

    if not chapters:
        raise BookError(
            BookCode.EMPTY, f"{path.name} has no readable text (it may contain only images)."
        )

    toc: list[TocItem] = []
    for title, level, target in toc_entries:
        chapter = chapter_of_doc.get(unquote(urlsplit(target).path))
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
        toc.append(TocItem(title, level, chapter=chapter))
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

"""EPUB 2 and 3: container → OPF → spine, metadata, table of contents, chapter text.

The archive is untrusted. Sizes and compression ratios are checked from the zip directory
before anything is decompressed and enforced again while reading; names with ``..`` or an
absolute path are never read; XML with entity declarations is refused (billion laughs);
chapter XHTML goes through the HTML parser, which has no entity expansion or network access.
"""

from __future__ import annotations

import posixpath
import re
from html import escape
from pathlib import Path

from core.books.comics import image_epub  # pre-paginated and image-only books
from core.books.epubahead import ReadAhead, worth_it
from core.books.epubcfi import CFI_ID, resolve_cfi_entries, with_cfi_ids
from core.books.epubdocs import book_image, picture_document, strip_subset, xml_check
from core.books.epubfonts import encode_faces, stylesheet_fonts
from core.books.epubpackage import first_meta, progression, read_package
from core.books.epubtoc import _Entry, _nav_toc, _ncx_toc, page_list
from core.books.epubzip import (
    EpubArchive,
    _check_drm,
    _find_opf,
    _local,
    _xml,
    read_resource,
)
from core.books.htmlblocks import TITLE_CHARS, clean_title, html_document, resolve_relative
from core.books.htmlextras import own_quotes
from core.books.limits import DEFAULT_LIMITS, Limits, too_large
from core.books.model import Block, BookFormat, Chapter, ParsedBook, TocAnchor, TocItem
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress

__all__ = ["EpubArchive", "parse_epub", "read_resource"]


def _is_heading(block: Block) -> bool:
    return block.kind[0] == "h" and block.kind[1:].isdigit()


def _has_content(block: Block) -> bool:
    """Text, or an image (an illustration or a frontispiece is part of the book)."""
    return bool(block.text) or block.kind == "img"


def _is_cover(doc: str, blocks: list[Block]) -> bool:
    """An image-only document that is the book's cover (by its name or its image's)."""
    if any(b.text and b.kind != "img" and not _only_pictures(b.text) for b in blocks):
        return False
    return "cover" in doc.lower() or all("cover" in b.html.lower() for b in blocks)


def _only_pictures(text: str) -> bool:
    """Text that is only the alt text of images (a cover whose file is missing)."""
    return not re.sub(r"\[Illustration: [^\]]*\]", "", text).strip()


def _is_boilerplate(title: str, block: Block | None) -> bool:
    """A contents "title" that is really a paragraph: far longer than any heading, and the
    element it points at is not a heading."""
    if len(title) <= TITLE_CHARS:
        return False
    return block is None or not _is_heading(block)


def _document(arc: EpubArchive, doc: str) -> bytes:
    """A spine document's bytes, with no internal DTD subset (core.books.epubdocs)."""
    return strip_subset(arc.read(doc))


def _read_ahead(arc: EpubArchive, docs: list[str]) -> ReadAhead[bytes] | None:
    """The documents ``docs`` unpacked ahead on a second thread, when that pays
    (core.books.epubahead). (Their lexbor trees are not made there: walking a tree built
    on the other core cost the parse more than building it took.)"""
    if not worth_it(sum(arc.entries[d].file_size for d in docs)):
        return None
    return ReadAhead(docs, lambda doc: _document(arc, doc))


def parse_epub(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedBook:
    arc = EpubArchive(path, limits)
    try:
        pictures = image_epub(arc)
        if pictures is not None:
            return pictures
        try:
            book = _parse(arc, progress, cancel)
            words = (b.text for chapter in book.chapters for b in chapter.blocks)
            if not any(text and not _only_pictures(text) for text in words):
                # pictures only (their pages are images with no words): the picture view,
                # with spreads and the book's direction, shows them better than the text flow
                return image_epub(arc, only_pre_paginated=False) or book
            return book
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
    manifest_el = next((c for c in opf if _local(c.tag) == "manifest"), None)
    spine_el = next((c for c in opf if _local(c.tag) == "spine"), None)
    if manifest_el is None or spine_el is None:
        raise BookError(
            BookCode.CORRUPT,
            f"{path.name} is not a valid EPUB: its package file has no manifest or spine.",
        )

    language = first_meta(opf, "language")

    pkg = read_package(opf, opf_path, arc)
    manifest = {key: (i.path, i.media_type, i.properties) for key, i in pkg.manifest.items()}
    spine = [doc.path for doc in pkg.spine]
    kinds = {doc.path: doc for doc in pkg.spine}
    problems: list[str] = []
    link_targets: dict[str, set[str]] = {}  # ids that links point at, by document
    quote_marks = not any(
        own_quotes(arc.read(i.path).decode("utf-8", errors="replace"))
        for i in pkg.manifest.values()
        if i.media_type == "text/css"
        and arc.has(i.path)
        and arc.entries[i.path].file_size < 500_000
    )
    styles = stylesheet_fonts(
        arc, {k: (i.path, i.media_type) for k, i in pkg.manifest.items()}, pkg.listed
    )

    toc_entries: list[_Entry] = []
    printed: list[_Entry] = []  # the page-list: printed page numbers
    nav = next((v[0] for v in manifest.values() if "nav" in v[2].split()), None)
    ncx = manifest.get(spine_el.get("toc", ""), (None,))[0] or next(
        (v[0] for v in manifest.values() if v[1] == "application/x-dtbncx+xml"), None
    )
    try:
        if nav and arc.has(nav):
            toc_entries = _nav_toc(arc, nav)
        if not toc_entries and ncx and arc.has(ncx):
            toc_entries = _ncx_toc(arc, ncx)
    except BookError:
        raise
    except Exception:
        toc_entries = []  # a broken table of contents should not stop the book from opening
    try:
        printed = page_list(arc, nav, ncx)
        if any("epubcfi(" in e.fragment for e in printed):
            itemrefs = [
                manifest[c.get("idref", "")][0]
                for c in spine_el
                if _local(c.tag) == "itemref" and c.get("idref", "") in manifest
            ]
            printed = resolve_cfi_entries(printed, itemrefs, opf_path, arc.read)
    except Exception:
        printed = []  # nor a broken page-list
    for entry in printed:
        if entry.fragment:
            link_targets.setdefault(entry.doc, set()).add(entry.fragment)

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
    sheets: dict[str | None, str | None] = {}  # the book's style sheets, read once
    total = max(len(spine), 1)
    readable = [d for d in spine if arc.has(d) and kinds[d].kind == "html"]
    ahead = _read_ahead(arc, readable)
    try:
        for i, doc in enumerate(spine):
            if cancel is not None:
                cancel.check()
            progress(i / total, f"Reading chapter {i + 1} of {total}")
            if not arc.has(doc):
                continue
            doc_dir = posixpath.dirname(doc)

            def resolve_image(src: str, doc_dir: str = doc_dir) -> str | None:
                return book_image(pkg, arc, doc_dir, src)

            def read_css(href: str, doc_dir: str = doc_dir) -> str | None:
                target = resolve_relative(doc_dir, href)  # the book's CSS: core.books.bookcss
                if target not in sheets:
                    found = target is not None and arc.has(target)
                    sheets[target] = (
                        arc.read(target or "").decode("utf-8", "replace") if found else None
                    )
                return sheets[target]

            spine_doc = kinds[doc]
            if spine_doc.kind != "html":
                title, blocks, anchors = picture_document(arc, pkg, spine_doc, ref_labels)
            else:
                data = ahead.take(doc) if ahead is not None else _document(arc, doc)
                if any(f.startswith(CFI_ID) for f in link_targets.get(doc, ())):
                    data = with_cfi_ids(data, link_targets[doc])  # a page-list's CFI targets
                if styles.faces or (b"@" in data and b"@font-face" in data):  # (memchr first)
                    styles.add_document(data, doc, pkg.listed)
                problem, utf8 = xml_check(data)
                if problem:
                    problems.append(f"{doc}: {problem}")
                title, blocks, anchors = html_document(
                    data,
                    resolve_image,
                    frozenset(wanted.get(doc, ())),
                    doc=doc,
                    ref_labels=ref_labels,
                    link_targets=link_targets,
                    font_classes=styles.classes,
                    quote_marks=quote_marks,
                    stylesheet=read_css,
                    utf8=utf8,
                )
            if blocks:
                # where a link to the document itself lands (``margin:DOC#``)
                lead = blocks[0]
                blocks[0] = Block(
                    lead.kind, lead.text, f'<a name="{escape(doc)}#"></a>{lead.html}', lead.style
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
                    Chapter(
                        clean_title(heading or title or f"Part {len(chapters) + 1}"), tuple(part)
                    )
                )
            if carried and len(chapters) > first:
                last = chapters[-1]
                chapters[-1] = Chapter(last.title, last.blocks + tuple(carried))
                for fragment, offset in pending:
                    chapter_at[(doc, fragment)] = (len(chapters) - 1, len(last.blocks) + offset)
            chapter_of_doc.setdefault(doc, first)
    finally:
        if ahead is not None:
            ahead.close()

    if not chapters and pkg.unreadable and not pkg.spine:
        formats = ", ".join(sorted(set(pkg.unreadable)))
        raise BookError(
            BookCode.UNSUPPORTED,
            f"{path.name} has nothing Margin can show: its pages are in formats it cannot read "
            f"({formats}), with no readable fallback.",
            hint="Look for an edition of the book in EPUB with XHTML pages, or in PDF.",
        )
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

    extra: dict[str, str] = {}
    if problems:
        extra["problems"] = "; ".join(problems)
    if printed:
        # where each printed page starts: the anchor names parse_book finds in the pages
        extra["page_list"] = "\n".join(
            f"{escape(f'{e.doc}#{e.fragment}')}\t{clean_title(e.title)}" for e in printed
        )
    if styles.faces:
        extra["fonts"] = encode_faces(styles.faces)
    if progression(opf):
        extra["progression"] = progression(opf)
    return ParsedBook(
        format=BookFormat.EPUB,
        title=first_meta(opf, "title") or path.stem,
        author=first_meta(opf, "creator"),
        language=language,
        chapters=tuple(chapters),
        toc=tuple(toc),
        extra=extra,
    )

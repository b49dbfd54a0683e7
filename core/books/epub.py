"""EPUB 2 and 3: container → OPF → spine, metadata, table of contents, chapter text.

The archive is untrusted. Sizes and compression ratios are checked from the zip directory
before anything is decompressed and enforced again while reading; names with ``..`` or an
absolute path are never read; XML with entity declarations is refused (billion laughs);
chapter XHTML goes through the HTML parser, which has no entity expansion or network access.
"""

from __future__ import annotations

import logging
from html import escape
from itertools import islice
from pathlib import Path

from core.books import epubworker
from core.books.comics import image_epub  # pre-paginated and image-only books
from core.books.epubahead import ReadAhead, worth_it
from core.books.epubcfi import resolve_cfi_entries
from core.books.epubchapters import _only_pictures, doc_chapters, finish_blocks
from core.books.epubcheck import UNCHECKED, unchecked_line
from core.books.epubdocs import page_ids, picture_document, spine_html, strip_subset
from core.books.epubfonts import BookStyles, encode_faces, stylesheet_fonts
from core.books.epubpackage import Package, first_meta, progression, read_package
from core.books.epubtoc import _Entry, _nav_toc, _ncx_toc, page_list
from core.books.epubzip import (
    EpubArchive,
    _check_drm,
    _find_opf,
    _local,
    _xml,
    read_resource,
)
from core.books.htmlblocks import clean_title
from core.books.htmlextras import own_quotes
from core.books.limits import DEFAULT_LIMITS, Limits
from core.books.model import BookFormat, Chapter, ParsedBook, TocAnchor, TocItem
from core.books.pages import ChapterCut, cut_chapter
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)
__all__ = ["EpubArchive", "parse_epub", "parse_epub_cut", "read_resource"]
PAGE_TARGET = 2000  # (core.books.parse's: the chapters the worker cuts are cut to it)


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
    return parse_epub_cut(path, progress=progress, cancel=cancel, limits=limits)[0]


def parse_epub_cut(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
    target: int = PAGE_TARGET,
) -> tuple[ParsedBook, dict[int, ChapterCut]]:
    """``parse_epub``, and the chapters already cut into pages of ``target`` characters
    (``core.books.pages.paginate_blocks``'s ``cuts``: those the worker read)."""
    arc = EpubArchive(path, limits)
    try:
        pictures = image_epub(arc)
        if pictures is not None:
            return pictures, {}
        try:
            book, cuts = _parse(arc, progress, cancel, target)
            words = (b.text for chapter in book.chapters for b in chapter.blocks)
            if not any(text and not _only_pictures(text) for text in words):
                # pictures only (their pages are images with no words): the picture view,
                # with spreads and the book's direction, shows them better than the text flow
                pictures = image_epub(arc, only_pre_paginated=False)
                return (pictures, {}) if pictures is not None else (book, cuts)
            return book, cuts
        except BookError as exc:
            pictures = image_epub(arc, only_pre_paginated=False) if exc.code == "empty" else None
            if pictures is None:
                raise
            return pictures, {}
    finally:
        arc.close()


def _helper(
    arc: EpubArchive,
    pkg: Package,
    readable: list[str],
    wanted: dict[str, set[str]],
    link_targets: dict[str, set[str]],
    quote_marks: bool,
    styles: BookStyles,
    toc_entries: list[_Entry],
    entries_of_doc: dict[str, list[int]],
    target: int,
) -> epubworker.Helper | None:
    """The second process reading the last documents, when that pays (core.books.epubworker);
    not for a book whose style sheets embed fonts (each document's classes depend on them)."""
    if styles.faces or not readable or not arc.limits.epub_worker:
        return None
    size = sum(arc.entries[d].file_size for d in readable)
    if not epubworker.worth_it(size, len(readable)) or not epubworker.wanted(size):
        return None
    try:
        stat = arc.path.stat()
    except OSError:
        return None
    job = epubworker.Job(
        str(arc.path), (stat.st_size, stat.st_mtime_ns), arc.limits, pkg, readable, wanted,
        link_targets, quote_marks, entries_of_doc, toc_entries, target,
    )  # fmt: skip
    return epubworker.helper(job)


def _note_docs(ref_labels: dict[str, str], seen: int, docs: set[str]) -> int:
    """Add to ``docs`` every document the note references after the first ``seen`` may
    point into (a key ``DOC#ID`` starts with ``DOC#``); how many there are now."""
    if len(ref_labels) > seen:
        for key in islice(ref_labels, seen, None):
            at = key.find("#")
            while at >= 0:
                docs.add(key[:at])
                at = key.find("#", at + 1)
    return len(ref_labels)


def _parse(
    arc: EpubArchive, progress: ProgressCallback, cancel: CancelToken | None, page_target: int
) -> tuple[ParsedBook, dict[int, ChapterCut]]:
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
    unchecked: list[str] = []  # documents whose XML is checked after the parse
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
    helper = _helper(arc, pkg, readable, wanted, link_targets, quote_marks, styles, toc_entries,
                     entries_of_doc, page_target)  # fmt: skip
    ahead = _read_ahead(arc, readable) if helper is None else None
    base_targets = {d: set(ids) for d, ids in link_targets.items()} if helper else {}
    label_docs: set[str] = set()  # documents the note references seen so far point into
    labels_seen = 0
    k = -1  # the document's place in ``readable``
    cuts: dict[int, ChapterCut] = {}
    from_worker = 0
    try:
        for i, doc in enumerate(spine):
            if cancel is not None:
                cancel.check()
            progress(i / total, f"Reading chapter {i + 1} of {total}")
            if not arc.has(doc):
                continue
            spine_doc = kinds[doc]
            doc_cuts: list[ChapterCut] = []
            if spine_doc.kind != "html":
                title, blocks, anchors = picture_document(arc, pkg, spine_doc, ref_labels)
                finish_blocks(path, doc, blocks, arc.limits.max_paragraph_chars)
                made = doc_chapters(doc, title, blocks, anchors, entries_of_doc.get(doc, []),
                                    toc_entries)  # fmt: skip
            else:
                k += 1
                got = helper.take(k) if helper is not None else None
                if got is not None:
                    labels_seen = _note_docs(ref_labels, labels_seen, label_docs)
                    if (
                        styles.faces
                        or doc in label_docs
                        or link_targets.get(doc, set()) != base_targets.get(doc, set())
                    ):
                        got = None  # the documents before it change how it reads: read here
                if got is not None:
                    from_worker += 1
                    problem, made, doc_cuts, labels, added = got
                    for key, label in labels:
                        ref_labels.setdefault(key, label)
                    for target_doc, ids in added:
                        link_targets.setdefault(target_doc, set()).update(ids)
                else:
                    read = ahead.take(doc) if ahead is not None else _document(arc, doc)
                    data = page_ids(read, doc, link_targets)
                    if styles.faces or (b"@" in data and b"@font-face" in data):  # (memchr)
                        styles.add_document(data, doc, pkg.listed)
                    problem, title, blocks, anchors = spine_html(
                        arc,
                        pkg,
                        doc,
                        data,
                        wanted=frozenset(wanted.get(doc, ())),
                        ref_labels=ref_labels,
                        link_targets=link_targets,
                        font_classes=styles.classes,
                        quote_marks=quote_marks,
                        sheets=sheets,
                        check=data is not read,  # (else later, core.books.epubcheck)
                    )
                    if problem is None:
                        unchecked.append(unchecked_line(problems, doc))
                    finish_blocks(path, doc, blocks, arc.limits.max_paragraph_chars)
                    made = doc_chapters(doc, title, blocks, anchors, entries_of_doc.get(doc, []),
                                        toc_entries)  # fmt: skip
                if problem:
                    problems.append(f"{doc}: {problem}")
            if made is None:
                continue
            first = len(chapters)
            dropped.update(made.dropped)
            for fragment, offset_chapter, offset in made.at:
                chapter_at[(doc, fragment)] = (first + offset_chapter, offset)
            for named, part in made.parts:
                chapters.append(Chapter(clean_title(named or f"Part {len(chapters) + 1}"), part))
            if helper is not None:
                # cut here too, so that the parse and the worker meet where both have done
                # the same work, and the parse has none left but the worker's documents
                if not doc_cuts:
                    doc_cuts = [cut_chapter(part, page_target) for _, part in made.parts]
                for n, cut in enumerate(doc_cuts):
                    cuts[first + n] = cut
                helper.unpack()  # (what the worker has sent: meanwhile it reads on)
            chapter_of_doc.setdefault(doc, first)
    finally:
        if ahead is not None:
            ahead.close()
        if helper is not None:
            helper.close()
            log.debug("the EPUB worker read %d of %d documents", from_worker, len(readable))

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
    if unchecked:
        extra[UNCHECKED] = "\n".join(unchecked)
    if printed:
        # where each printed page starts: the anchor names parse_book finds in the pages
        extra["page_list"] = "\n".join(
            f"{escape(f'{e.doc}#{e.fragment}')}\t{clean_title(e.title)}" for e in printed
        )
    if styles.faces:
        extra["fonts"] = encode_faces(styles.faces)
    if progression(opf):
        extra["progression"] = progression(opf)
    book = ParsedBook(
        format=BookFormat.EPUB,
        title=first_meta(opf, "title") or path.stem,
        author=first_meta(opf, "creator"),
        language=language,
        chapters=tuple(chapters),
        toc=tuple(toc),
        extra=extra,
    )
    return book, cuts

"""What runs in the EPUB worker process (core.books.epubworker has the parse's side): a
book's documents read from the back, each claimed in the shared counters first, and sent
back as core.books.epubwire encodes them.
"""

from __future__ import annotations

import gc
import logging
import os
import struct
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from core.books.epubchapters import doc_chapters, finish_blocks
from core.books.epubdocs import page_ids, spine_html, strip_subset
from core.books.epubpackage import Package
from core.books.epubtoc import _Entry
from core.books.epubwire import encode
from core.books.limits import Limits
from core.books.pages import cut_chapter, whole_pages

log = logging.getLogger(__name__)
FRONT, BACK = 0, 1  # the shared counters: documents the parse took; lowest the worker took
HEAD = struct.Struct("<BqqQQ")  # (kind, job, document, sizes of its two parts) before each
RESULT, SKIP, END = 0, 1, 2  # a document read, one left to the parse, the worker done


@dataclass
class Job:
    """What the worker needs to read a book's documents as the parse would."""

    path: str
    stamp: tuple[int, int]  # the file's size and modification time when the parse opened it
    limits: Limits
    pkg: Package
    docs: list[str]  # the XHTML spine documents, in order
    wanted: dict[str, set[str]]  # ids the contents point at, by document
    targets: dict[str, set[str]]  # link targets known before the first document
    quote_marks: bool
    numbers: dict[str, list[int]]  # contents entries pointing into each document
    toc_entries: list[_Entry]
    target: int  # page size (core.books.parse.PAGE_TARGET)
    number: int = 0  # which job this is (messages of an older one are ignored)


class _Targets(dict[str, set[str]]):
    """Link targets as one document sees them: those known before (``base``) and what it
    adds (``added``)."""

    def __init__(self, base: dict[str, set[str]], doc: str) -> None:
        super().__init__()
        self.base = base
        if doc in base:
            self[doc] = set(base[doc])

    def setdefault(self, key: str, default: set[str] | None = None) -> set[str]:
        if key not in self:
            self[key] = set(self.base.get(key, ()))
        return self[key]

    def added(self) -> list[tuple[str, list[str]]]:
        out = []
        for doc, ids in self.items():
            new = ids - self.base.get(doc, set())
            if new:
                out.append((doc, list(new)))
        return out


def _read(
    arc: Any, job: Job, index: int, sheets: dict[str | None, str | None]
) -> tuple[bytes, bytes] | None:
    """One document, encoded (core.books.epubwire; None: one the parse must read, as it
    names a font face)."""
    doc = job.docs[index]
    data = page_ids(strip_subset(arc.read(doc)), doc, job.targets)
    if b"@" in data and b"@font-face" in data:
        return None
    labels: dict[str, str] = {}
    targets = _Targets(job.targets, doc)
    problem, title, blocks, anchors = spine_html(
        arc,
        job.pkg,
        doc,
        data,
        wanted=frozenset(job.wanted.get(doc, ())),
        ref_labels=labels,
        link_targets=targets,
        font_classes={},
        quote_marks=job.quote_marks,
        sheets=sheets,
    )
    finish_blocks(Path(job.path), doc, blocks, job.limits.max_paragraph_chars)
    made = doc_chapters(doc, title, blocks, anchors, job.numbers.get(doc, []), job.toc_entries)
    cuts = [
        cut_chapter(part, job.target, strings=not whole_pages(part, job.target))
        for _, part in (made.parts if made else ())
    ]
    return encode(problem or "", made, cuts, list(labels.items()), targets.added())


RAW = hasattr(os, "writev") and hasattr(os, "readv")  # (POSIX; Windows: the pipe's messages)


def _send(
    out: Connection, kind: int, job: int, index: int, meta: bytes = b"", wide: bytes = b""
) -> None:
    """One message on the results pipe: its head, then ``meta`` and ``wide``."""
    head = HEAD.pack(kind, job, index, len(meta), len(wide))
    if not RAW:
        out.send_bytes(head + meta + wide)
        return
    views = [memoryview(head), memoryview(meta)]
    if wide:
        views.append(memoryview(wide))
    fd = out.fileno()
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views[0])
            views.pop(0)
        if views and written:
            views[0] = views[0][written:]


def _run(out: Connection, shared: Any, job: Job) -> None:
    from core.books.epubzip import EpubArchive

    end = len(job.docs) - 1
    arc = None
    try:
        stat = os.stat(job.path)
        if (stat.st_size, stat.st_mtime_ns) == job.stamp:
            arc = EpubArchive(Path(job.path), job.limits)
    except Exception:
        log.debug("the EPUB worker could not open %s", job.path, exc_info=True)
    if arc is not None:
        sheets: dict[str | None, str | None] = {}
        try:
            for index in range(len(job.docs) - 1, -1, -1):
                shared[BACK] = index  # claimed, then looked whether the parse took it first
                if shared[FRONT] > index:
                    break
                try:
                    payload = _read(arc, job, index, sheets)
                except Exception:  # the parse reads it again, and says what is wrong
                    log.debug("the EPUB worker could not read %s", job.docs[index], exc_info=True)
                    break
                if payload is None:
                    _send(out, SKIP, job.number, index)
                else:
                    _send(out, RESULT, job.number, index, *payload)
                end = index - 1
        finally:
            arc.close()
    _send(out, END, job.number, end)


def serve(conn: Connection, results: Connection, shared: Any) -> None:
    """The worker process: books from ``conn`` until it closes or sends None; what it reads
    goes to ``results``."""
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        gc.disable()  # (a document's objects form no cycles: core.books.memory.gc_paused)
        try:
            _run(results, shared, job)
        except (EOFError, OSError):
            return  # the parse's process is gone
        finally:
            gc.enable()

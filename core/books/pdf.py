"""PDF books with pypdfium2: real pages, page labels, the outline as table of contents.

Text extraction costs 4–6 ms a page. Long PDFs are split in two halves: this process reads
the first half while one worker process (spawned, never forked: the window process has Qt
threads) reads the second, so an import uses both cores.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import statistics
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from core.books.limits import DEFAULT_LIMITS, Limits, too_large
from core.books.model import BookFormat, PageContent, ParsedBook, TocItem
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress

PARALLEL_FROM_PAGES = 40
MIN_FREE_CORES = 1.5
"""Idle cores needed (this process's own, sleeping while it measures, plus most of one more)
before a PDF is split with a worker process."""
_SPACES = re.compile(r"[ \t\u00a0]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def _open(path: Path):  # type: ignore[no-untyped-def]
    import pypdfium2 as pdfium

    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        # pdfium's last-error value is not reset on success, so a stale "password" error can
        # show up for an unrelated file: only trust it when the file really is encrypted.
        text = str(exc).lower()
        if "password" in text and _is_encrypted(path):
            raise BookError(
                BookCode.PASSWORD,
                f"{path.name} is password-protected, and Margin cannot open protected PDFs yet.",
                hint="Save a copy without the password (most PDF viewers can) and open that.",
            ) from None
        if "success" in text or "password" in text:
            raise BookError(
                BookCode.EMPTY,
                f"{path.name} has no pages (or its list of pages is damaged).",
                hint="Open it in another viewer to check, and save a new copy.",
            ) from None
        raise BookError(
            BookCode.CORRUPT,
            f"{path.name} is damaged or is not really a PDF ({exc}).",
            hint="Download it again, or open it in another viewer and save a new copy.",
        ) from None
    except OSError as exc:
        raise BookError(
            BookCode.UNREADABLE, f"{path.name} could not be read ({exc.strerror or exc})."
        ) from None


def _is_encrypted(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - 1024 * 1024))
            tail = fh.read()
    except OSError:
        return False
    return b"/Encrypt" in tail


def clean_page_text(raw: str) -> str:
    """Normalise pdfium's text: line ends, soft hyphens, and a blank line between paragraphs
    where a short line ends a sentence (a heuristic that keeps results deterministic)."""
    text = _CONTROL.sub("", raw.replace("\r\n", "\n").replace("\r", "\n"))
    lines = [_SPACES.sub(" ", ln).strip() for ln in text.split("\n")]
    lines = [ln for ln in lines if ln]
    if not lines:
        return ""
    typical = statistics.median(len(ln) for ln in lines)
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i == len(lines) - 1:
            break
        ends_para = line.endswith((".", "!", "?", ":", "”", '"')) and len(line) < 0.75 * typical
        out.append("\n\n" if ends_para else "\n")
    return "".join(out)


def _page_text(doc: object, index: int) -> str:
    page = doc[index]  # type: ignore[index]
    try:
        textpage = page.get_textpage()
        try:
            return clean_page_text(textpage.get_text_bounded())
        finally:
            textpage.close()
    finally:
        page.close()


def extract_range(path_str: str, start: int, stop: int) -> list[str]:
    """Text of pages ``start``..``stop-1`` (0-based), opening the file for this call."""
    doc = _open(Path(path_str))
    try:
        return [_page_text(doc, index) for index in range(start, stop)]
    finally:
        doc.close()


_worker_doc: tuple[str, object] | None = None


def _worker_extract(path_str: str, start: int, stop: int, last: bool) -> list[str]:
    """Worker-process side: the document stays open across the pieces of one book (opening
    a long PDF costs more than a few pages of text) and is closed after its last piece, or
    when the next book arrives after a cancelled one."""
    global _worker_doc
    if _worker_doc is not None and _worker_doc[0] != path_str:
        _worker_doc[1].close()  # type: ignore[attr-defined]
        _worker_doc = None
    if _worker_doc is None:
        _worker_doc = (path_str, _open(Path(path_str)))
    doc = _worker_doc[1]
    try:
        return [_page_text(doc, index) for index in range(start, stop)]
    finally:
        if last:
            doc.close()  # type: ignore[attr-defined]
            _worker_doc = None


def _labels(doc: object, count: int) -> list[str]:
    import pypdfium2.raw as raw

    labels: list[str] = []
    getter = getattr(raw, "FPDF_GetPageLabel", None)
    for index in range(count):
        label = ""
        if getter is not None:
            size = getter(doc.raw, index, None, 0)  # type: ignore[attr-defined]
            if size > 2:
                buffer = ctypes.create_string_buffer(size)
                getter(doc.raw, index, buffer, size)  # type: ignore[attr-defined]
                label = buffer.raw[: size - 2].decode("utf-16-le", errors="replace").strip()
        labels.append(label or str(index + 1))
    return labels


def _toc(doc: object, count: int) -> list[TocItem]:
    items: list[TocItem] = []
    try:
        for bookmark in doc.get_toc():  # type: ignore[attr-defined]
            title = " ".join((bookmark.get_title() or "").split())
            dest = bookmark.get_dest()
            index = dest.get_index() if dest is not None else None
            if title and index is not None and 0 <= index < count:
                items.append(TocItem(title, bookmark.level + 1, page=index + 1))
    except Exception:
        return []  # a broken outline should not stop the book from opening
    return items


def _meta(doc: object) -> dict[str, str]:
    try:
        return {k: str(v).strip() for k, v in doc.get_metadata_dict().items() if v}  # type: ignore[attr-defined]
    except Exception:
        return {}


def parse_pdf(
    path: Path,
    *,
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ParsedBook:
    doc = _open(path)
    try:
        count = len(doc)
        if count == 0:
            raise BookError(BookCode.EMPTY, f"{path.name} has no pages.")
        if count > limits.max_pages:
            raise too_large(path, f"it has {count:,} pages, more than {limits.max_pages:,}")
        labels = _labels(doc, count)
        toc = _toc(doc, count)
        meta = _meta(doc)
        texts = _extract_all(doc, path, count, progress, cancel, use_worker=_use_worker(count))
    finally:
        doc.close()

    if sum(len(t.strip()) for t in texts) < max(10, count):
        raise BookError(
            BookCode.NO_TEXT,
            f"{path.name}: this PDF has no text (scanned pages); text recognition is not supported.",
            hint="Run it through an OCR tool first (for example ocrmypdf) and open the result.",
        )
    for text in texts:
        longest = max((len(p) for p in text.split("\n\n")), default=0)
        if longest > limits.max_paragraph_chars:
            raise too_large(
                path, f"one paragraph is longer than {limits.max_paragraph_chars:,} characters"
            )
    pages = tuple(
        PageContent(number=i + 1, label=labels[i], text=texts[i], chapter=0) for i in range(count)
    )
    title = meta.get("Title", "")
    if not title or title.lower() in ("untitled", "microsoft word", "title"):
        title = path.stem.replace("_", " ")
    return ParsedBook(
        format=BookFormat.PDF,
        title=title,
        author=meta.get("Author", ""),
        language="",
        pages=pages,
        toc=tuple(toc),
    )


_pool: ProcessPoolExecutor | None = None


def _worker_pool() -> ProcessPoolExecutor:
    """One long-lived spawned worker: starting a process costs ~0.1 s, so it is reused."""
    global _pool
    if _pool is None:
        ctx = multiprocessing.get_context("spawn")
        _pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
    return _pool


def shutdown_workers() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


def _free_cores(window: float = 0.05) -> float | None:
    """How many cores sat idle over a short ``window`` (Linux /proc/stat), or None when it
    cannot be told."""

    def sample() -> tuple[int, int] | None:
        try:
            with open("/proc/stat", encoding="ascii") as fh:
                fields = fh.readline().split()
        except OSError:
            return None
        if not fields or fields[0] != "cpu":
            return None
        values = [int(v) for v in fields[1:]]
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return idle, sum(values[:8])

    first = sample()
    if first is None:
        return None
    time.sleep(window)
    second = sample()
    if second is None or second[1] <= first[1]:
        return None
    cores = os.cpu_count() or 1
    return cores * (second[0] - first[0]) / (second[1] - first[1])


def _use_worker(count: int, free: float | None = None, cores: int | None = None) -> bool:
    """Split a PDF between this process and a worker only when it pays: a long book, and a
    second core that is really free (when another program keeps it busy the two processes
    only fight over one core, and one process is faster)."""
    if count < PARALLEL_FROM_PAGES:
        return False
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count() or 1
    if cores < 2:
        return False
    if free is None:
        free = _free_cores()
    return free is None or free >= MIN_FREE_CORES


def _extract_all(
    doc: object,
    path: Path,
    count: int,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    *,
    use_worker: bool,
) -> list[str]:
    """Text of every page, in order. ``doc`` (already open) serves this process's share;
    with ``use_worker`` a worker process reads the back part in pieces meanwhile."""
    batch = 16
    split = count
    futures: list[Future[list[str]]] = []
    if use_worker:
        # The worker takes the back ~half in a few pieces (so cancellation is prompt); this
        # process reads the front half meanwhile. The split favours this process slightly
        # because the worker pays to start and to open the file.
        split = count * 9 // 20
        pieces = 4
        step = max(1, (count - split + pieces - 1) // pieces)
        starts = list(range(split, count, step))
        try:
            pool = _worker_pool()
            futures = [
                pool.submit(_worker_extract, str(path), s, min(count, s + step), s == starts[-1])
                for s in starts
            ]
        except Exception:
            futures = []
            split = count
    front: list[str] = []
    try:
        for start in range(0, split, batch):
            if cancel is not None:
                cancel.check()
            front.extend(_page_text(doc, i) for i in range(start, min(split, start + batch)))
            done = len(front) + sum(
                len(f.result()) for f in futures if f.done() and not f.exception()
            )
            progress(done / count, f"Reading page {done} of {count}")
        back: list[str] = []
        for future in futures:
            while True:
                if cancel is not None:
                    cancel.check()
                try:
                    back.extend(future.result(timeout=0.1))
                    break
                except TimeoutError:
                    continue
            progress(
                (len(front) + len(back)) / count,
                f"Reading page {len(front) + len(back)} of {count}",
            )
        return front + back
    except BaseException:
        for future in futures:
            future.cancel()
        raise

"""PDF books with pypdfium2: real pages, page labels, the outline as table of contents.

Text extraction costs 4–6 ms a page and runs in worker processes (spawned, never forked: the
window process has Qt threads) whose memory is capped, so a hostile page cannot exhaust the
computer's memory. Long PDFs are shared by two workers when a second core is free.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import re
import statistics
import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from core.books.limits import DEFAULT_LIMITS, Limits, human_size, too_large
from core.books.model import BookFormat, PageContent, ParsedBook, TocItem
from core.books.titles import clean_title
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress

log = logging.getLogger(__name__)
PARALLEL_FROM_PAGES = 60
"""From this many pages a second worker may share the reading."""
FIRST_PIECE = 16
PIECE = 32
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


_worker_doc: tuple[tuple[str, int, int], object] | None = None


def _worker_extract(path_str: str, start: int, stop: int) -> list[str]:
    """Worker-process side: the document stays open across the pieces of one book (opening
    a long PDF costs more than a few pages of text) until ``_worker_close`` or another
    file."""
    global _worker_doc
    try:
        stat = os.stat(path_str)
        key = (path_str, stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = (path_str, 0, 0)
    if _worker_doc is not None and _worker_doc[0] != key:
        _worker_close()
    if _worker_doc is None:
        _worker_doc = (key, _open(Path(path_str)))
    doc = _worker_doc[1]
    try:
        return [_page_text(doc, index) for index in range(start, stop)]
    except BaseException:
        _worker_close()
        raise


def _worker_close() -> None:
    global _worker_doc
    if _worker_doc is not None:
        _worker_doc[1].close()  # type: ignore[attr-defined]
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
            title = clean_title(bookmark.get_title() or "")
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
    finally:
        doc.close()
    texts = _extract_all(path, count, progress, cancel, limits)

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


_pools: dict[int, tuple[int, ProcessPoolExecutor]] = {}  # slot -> (memory cap, pool)


def _limit_memory(max_bytes: int) -> None:
    """Worker initializer: end with the process that started it (a killed import leaves no
    worker behind), and cap the worker's address space, so a page whose content stream
    unpacks to gigabytes (a deflate bomb) fails in the worker, not the whole computer."""
    from core.store.owner import exit_with_parent

    exit_with_parent()
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = max_bytes if hard == resource.RLIM_INFINITY else min(max_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass  # not on this system: the worker still keeps the window process safe


def _worker_pool(slot: int, max_bytes: int) -> ProcessPoolExecutor:
    """Long-lived spawned single-process pools (starting one costs ~0.1 s, so they are
    reused). Slot 0 reads every PDF; slot 1 joins for long ones when a core is free."""
    current = _pools.get(slot)
    if current is not None and current[0] == max_bytes:
        return current[1]
    if current is not None:
        _started.discard(id(current[1]))
        current[1].shutdown(wait=False, cancel_futures=True)
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(
        max_workers=1, mp_context=ctx, initializer=_limit_memory, initargs=(max_bytes,)
    )
    _pools[slot] = (max_bytes, pool)
    return pool


def _ready() -> bool:
    return True


_started: set[int] = set()  # ids of pools whose worker process has answered once
WORKER_START_S = 60.0


def _worker_failed(detail: object) -> BookError:
    return BookError(
        "worker_failed",
        f"Margin could not start the helper process that reads PDF text ({detail}).",
        hint="Close some programs and try again; if it keeps happening, reinstall Margin.",
    )


def _started_pool(slot: int, max_bytes: int) -> ProcessPoolExecutor:
    """The pool of ``slot`` with its worker known to run: a worker that cannot start (no
    processes left, a broken installation) is reported as that, not as a memory problem
    or a damaged book."""
    try:
        pool = _worker_pool(slot, max_bytes)
    except OSError as exc:  # the resource tracker (started with the same executable) died
        raise _worker_failed(exc.strerror) from exc
    if id(pool) in _started:
        return pool
    try:
        pool.submit(_ready).result(timeout=WORKER_START_S)
    except (OSError, BrokenProcessPool, RuntimeError, TimeoutError) as exc:
        if _pools.get(slot, (0, None))[1] is pool:
            del _pools[slot]
        pool.shutdown(wait=False, cancel_futures=True)
        raise _worker_failed(exc.strerror if isinstance(exc, OSError) else exc) from exc
    _started.add(id(pool))
    return pool


def warm_workers(limits: Limits = DEFAULT_LIMITS) -> None:
    """Start the PDF workers ahead of time (a cold start costs a few hundred ms), e.g. when
    the window has shown. Does not wait for them."""
    slots = 2 if _usable_cores() >= 2 else 1
    for slot in range(slots):
        _worker_pool(slot, limits.max_pdf_worker_bytes).submit(_ready)


def shutdown_workers(*, wait: bool = False) -> None:
    for slot in list(_pools):
        pool = _pools.pop(slot)[1]
        _started.discard(id(pool))
        pool.shutdown(wait=wait, cancel_futures=True)


# Idle workers (each ~40 MB) and multiprocessing's resource tracker end a few seconds after
# the last PDF was read; the next PDF starts them again (~0.1-0.3 s).
IDLE_S = 5.0
_idle_lock = threading.Lock()
_idle_timer: threading.Timer | None = None
_reading = 0  # PDFs being read now


def _busy() -> None:
    global _reading, _idle_timer
    with _idle_lock:
        _reading += 1
        if _idle_timer is not None:
            _idle_timer.cancel()
            _idle_timer = None


def _idle() -> None:
    global _reading, _idle_timer
    with _idle_lock:
        _reading -= 1
        if _reading == 0 and _pools:
            _idle_timer = threading.Timer(IDLE_S, _stop_idle_workers)
            _idle_timer.daemon = True
            _idle_timer.name = "margin-pdf-idle"
            _idle_timer.start()


def _stop_idle_workers() -> None:
    global _idle_timer
    with _idle_lock:
        if _reading or _idle_timer is None:
            return  # a PDF started meanwhile
        _idle_timer = None
        shutdown_workers(wait=True)
        stop_resource_tracker()
    from core.memory import give_back_memory

    give_back_memory()
    log.info("PDF workers stopped after %.0f s idle", IDLE_S)


def stop_resource_tracker() -> None:
    """End multiprocessing's resource-tracker process once no worker is left (it starts
    with the first worker pool and would otherwise stay for the whole session)."""
    if _pools:
        return
    import gc
    from multiprocessing import resource_tracker

    gc.collect()  # the pools' queues unregister their semaphores when collected
    stop = getattr(resource_tracker._resource_tracker, "_stop", None)
    if stop is not None:
        try:
            stop()
        except Exception:
            log.debug("the resource tracker did not stop", exc_info=True)


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _ranges(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(stop, s + size)) for s in range(start, stop, size)]


def _extract_all(
    path: Path,
    count: int,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    limits: Limits,
    *,
    use_worker: bool | None = None,
) -> list[str]:
    """Text of every page, in order, read in worker processes with a memory cap.

    One worker reads a short book, or any book on a machine with one usable core. A long
    book (``PARALLEL_FROM_PAGES``) gets a second worker. The workers take the next piece as
    they finish one, so a worker slowed by another program never holds the book up (a fixed
    half each made the split slower than one process when the other core was busy; measured
    in tests/bench/bench_import.py --compare). ``use_worker`` forces the second worker on
    (True) or off (False).
    """
    _busy()
    try:
        return _read_pages(path, count, progress, cancel, limits, use_worker)
    finally:
        _idle()


def _read_pages(
    path: Path,
    count: int,
    progress: ProgressCallback,
    cancel: CancelToken | None,
    limits: Limits,
    use_worker: bool | None,
) -> list[str]:
    name = str(path)
    workers = [_started_pool(0, limits.max_pdf_worker_bytes)]
    pieces = [(0, min(count, FIRST_PIECE)), *_ranges(min(count, FIRST_PIECE), count, PIECE)]
    queue = deque(enumerate(pieces))
    waiting: list[deque[tuple[int, Future[list[str]]]]] = [deque()]
    results: dict[int, list[str]] = {}

    def feed(w: int) -> None:
        while len(waiting[w]) < 2 and queue:
            index, (start, stop) = queue.popleft()
            waiting[w].append((index, workers[w].submit(_worker_extract, name, start, stop)))

    try:
        feed(0)
        if use_worker is None:
            use_worker = count >= PARALLEL_FROM_PAGES and _usable_cores() >= 2
        if use_worker and len(pieces) > 2:
            try:
                workers.append(_started_pool(1, limits.max_pdf_worker_bytes))
            except BookError:
                use_worker = False  # the first worker reads it alone
        if use_worker and len(workers) == 2:
            waiting.append(deque())
            feed(1)
        done = 0
        while done < len(pieces):
            if cancel is not None:
                cancel.check()
            futures_wait(
                [f for line in waiting for _, f in line], timeout=0.1, return_when=FIRST_COMPLETED
            )
            for w, line in enumerate(waiting):
                while line and line[0][1].done():
                    index, future = line.popleft()
                    results[index] = future.result()
                feed(w)
            before_done = done
            while done in results:
                done += 1
            if done != before_done:
                read = sum(len(results[i]) for i in range(done))
                progress(read / count, f"Reading page {read} of {count}")
        return [text for i in range(len(pieces)) for text in results[i]]
    except BaseException as exc:
        for line in waiting:
            for _, future in line:
                future.cancel()
        if isinstance(exc, (MemoryError, BrokenProcessPool)):
            shutdown_workers()  # a worker that ran out of memory may be dead or unusable
            raise too_large(
                path,
                f"reading its text needs more than {human_size(limits.max_pdf_worker_bytes)} "
                "of memory (the file may be damaged, or built to exhaust memory)",
                hint="Open it in another PDF viewer and save a new copy, then open that.",
            ) from None
        if isinstance(exc, Exception) and not isinstance(exc, BookError):
            raise BookError(
                BookCode.CORRUPT,
                f"{path.name} is damaged: some of its pages cannot be read ({exc}).",
                hint="Open it in another PDF viewer and save a new copy, then open that.",
            ) from None
        raise
    finally:
        for worker in workers:
            try:
                worker.submit(_worker_close)  # runs after this worker's pieces
            except RuntimeError:
                pass  # the pool was shut down

"""Text recognition (OCR) for PDF pages that are pictures, with the system's ``tesseract``
when it is installed (Margin never bundles it). Each page without text is drawn in grey at
300 dpi by pdfium and read by ``tesseract``; the text found becomes the page's text, so
search finds it and answers cite it. The book's pages, chunks and index are replaced in one
transaction (notes, highlights and conversations stay); a Stop leaves the book as it was.

The recognised text is also kept on its own (table ``ocr_text``, with the file's SHA-256):
reading the book again (``reimport_book``: a newer reader) finds its picture pages without
text again, and ``keep_recognised`` gives them back what was recognised, without running
tesseract again, when the file is the one it was read from (so the pictures are unchanged)
and the page still has no text of its own.

Pages are drawn in the PDF text worker, whose memory is capped (``core.books.pdf``), into a
file tesseract reads: the window's process never holds a picture, and a page whose pictures
would unpack to more than half the cap is refused there with a clear message (issue 46 item
9: one 100-inch picture page took 3.56 GB inside the window's process; a 0.8 MB page of one
16,384² picture, 931 MB and 19 s)."""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from core.books.chunking import make_chunks
from core.books.limits import DEFAULT_LIMITS, Limits, human_size
from core.books.model import ParsedBook
from core.books.pdf_doc import clean_page_text, open_pdf
from core.errors import BookCode, BookError
from core.progress import CancelToken, ProgressCallback, no_progress
from core.store.library import BookInfo, Library

log = logging.getLogger("margin.ocr")
DPI = 300
OCR_PIXELS = 40_000_000  # a page drawn for recognition holds at most this many (40 MB grey)
PAGE_TIMEOUT_S = 120


def engine() -> str | None:
    """The ``tesseract`` program, or None when it is not installed."""
    return shutil.which("tesseract")


def available() -> bool:
    return engine() is not None


def render_scale(width_pt: float, height_pt: float, dpi: int = DPI) -> float:
    """The scale a page is drawn at for recognition: ``dpi``, lowered so the picture holds
    at most ``OCR_PIXELS`` (a 100-inch page at 300 dpi is 900 megapixels: 3.56 GB in the
    window's process, issue 46 item 9)."""
    scale = dpi / 72
    area = max(1.0, width_pt * height_pt) * scale * scale
    if area > OCR_PIXELS:
        scale *= (OCR_PIXELS / area) ** 0.5 * 0.999  # (pdfium rounds the size up)
    return scale


def _page_image(doc: object, index: int, dpi: int = DPI) -> bytes:
    """The page drawn in grey as a PGM image (what tesseract reads from its input), within
    the pixel budget (``render_scale``)."""
    out = io.BytesIO()
    _draw_page(doc, index, dpi, out)
    return out.getvalue()


def _draw_page(doc: object, index: int, dpi: int, out: BinaryIO) -> None:
    """Write the page drawn in grey to ``out`` as a PGM image, row by row (no second copy
    of the picture)."""
    page = doc[index]  # type: ignore[index]
    try:
        width_pt, height_pt = page.get_size()
        bitmap = page.render(scale=render_scale(width_pt, height_pt, dpi), grayscale=True)
        try:
            width, height, stride = bitmap.width, bitmap.height, bitmap.stride
            out.write(f"P5\n{width} {height}\n255\n".encode())
            raw = memoryview(bitmap.buffer).cast("B")
            for y in range(height):
                out.write(raw[y * stride : y * stride + width])
            raw.release()
        finally:
            bitmap.close()
    finally:
        page.close()


def _pictures_bytes(doc: object, index: int) -> int:
    """The memory the page's pictures take once decoded (4 bytes a pixel), read from their
    sizes without decoding them."""
    import pypdfium2.raw as pdfium_c

    page = doc[index]  # type: ignore[index]
    try:
        total = 0
        for picture in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=4):
            width, height = picture.get_px_size()
            total += 4 * max(0, width) * max(0, height)
        return total
    finally:
        page.close()


def _worker_draw(
    path: str, password: str | None, index: int, dpi: int, out: str, budget: int
) -> None:
    """Worker-process side: draw one page into the PGM file ``out``. A page whose pictures
    would take more than ``budget`` decoded is refused (``MemoryError`` with their size):
    pdfium would leave a picture it cannot hold out of the drawing without a word."""
    doc = open_pdf(Path(path), password)
    try:
        if (need := _pictures_bytes(doc, index)) > budget:
            raise MemoryError(need)
        with open(out, "wb") as fh:
            _draw_page(doc, index, dpi, fh)
    finally:
        doc.close()


def _draw_in_worker(
    pool: ProcessPoolExecutor,
    args: tuple[str, str | None, int, int, str, int],
    cancel: CancelToken | None,
    cap: int,
) -> None:
    """Draw a page in the PDF worker ``pool`` (its memory capped: ``core.books.pdf``)."""
    from core.books.pdf import shutdown_workers

    index = args[2]
    try:
        future = pool.submit(_worker_draw, *args)
        while True:
            try:
                future.result(timeout=0.2)
                return
            except FutureTimeout:
                if cancel is not None and cancel.cancelled:
                    future.cancel()
                    raise BookError(BookCode.CANCELLED, "Text recognition was stopped.") from None
    except (MemoryError, BrokenProcessPool) as exc:
        log.warning("page %d could not be drawn for recognition: %r", index + 1, exc)
        need = exc.args[0] if isinstance(exc, MemoryError) and exc.args else 0
        if not isinstance(need, int) or need <= 0:
            shutdown_workers()  # the worker ran out of memory: it may be dead or unusable
            need = cap
        raise BookError(
            BookCode.TOO_LARGE,
            f"Page {index + 1} cannot be recognised: its pictures need "
            f"{human_size(need)} of memory to draw, more than Margin allows for one page "
            "(the file may be damaged, or built to exhaust memory).",
            hint="The book is as it was. Open the file in another PDF viewer, save a new "
            "copy, and import that.",
        ) from None


def _missing() -> BookError:
    return BookError(
        "ocr_missing",
        "Text recognition needs the tesseract program, which is not installed.",
        hint="Install tesseract (for example the tesseract-ocr package) and try again.",
    )


def recognise_image(
    image: bytes, *, language: str = "eng", cancel: CancelToken | None = None
) -> str:
    """The text tesseract reads in ``image``; a Stop ends the program at once."""
    if engine() is None:
        raise _missing()
    with tempfile.NamedTemporaryFile(prefix="margin-ocr-", suffix=".pgm") as picture:
        picture.write(image)
        picture.flush()
        return recognise_file(Path(picture.name), language=language, cancel=cancel)


def recognise_file(
    picture: Path, *, language: str = "eng", cancel: CancelToken | None = None
) -> str:
    """The text tesseract reads in the image file ``picture``; a Stop ends it at once."""
    program = engine()
    if program is None:
        raise _missing()
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}  # one core: the window keeps the other
    proc = subprocess.Popen(
        [program, str(picture), "stdout", "-l", language],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        waited = 0.0
        while True:
            try:
                out, _ = proc.communicate(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                waited += 0.2
                if cancel is not None and cancel.cancelled:
                    raise BookError(BookCode.CANCELLED, "Text recognition was stopped.") from None
                if waited > PAGE_TIMEOUT_S:
                    raise BookError("ocr_failed", "Reading a page took too long.") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return clean_page_text(out.decode("utf-8", errors="replace"))


def recognise_book(
    library: Library,
    book_id: int,
    *,
    password: str | None = None,
    language: str = "eng",
    progress: ProgressCallback = no_progress,
    cancel: CancelToken | None = None,
    recognise: Callable[[bytes], str] | None = None,
    dpi: int = DPI,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[BookInfo, int]:
    """Read the text of the PDF's pages that have none. Returns the book and how many pages
    now have text."""
    from core.books.pdf import parse_pdf, pdf_worker

    book = library.get_book(book_id)
    if book.format != "pdf":
        raise BookError(BookCode.UNSUPPORTED, "Text recognition reads PDF pages only.")
    path = Path(book.file_path or "")
    if not path.is_file():
        raise BookError(
            BookCode.NOT_FOUND,
            f'The library\'s copy of "{book.title}" is missing.',
            hint="Import the original file again.",
        )
    parsed = parse_pdf(path, password=password, cancel=cancel)
    empty = [p.number for p in parsed.pages if not p.text.strip()]
    found: dict[int, str] = {}
    cap = limits.max_pdf_worker_bytes
    with pdf_worker(limits) as pool, tempfile.TemporaryDirectory(prefix="margin-ocr-") as folder:
        picture = Path(folder) / "page.pgm"
        for done, number in enumerate(empty):
            if cancel is not None:
                cancel.check()
            progress(done / max(1, len(empty)), f"Reading page {done + 1} of {len(empty)}")
            args = (str(path), password, number - 1, dpi, str(picture), cap // 2)
            _draw_in_worker(pool, args, cancel, cap)
            if recognise is not None:
                text = recognise(picture.read_bytes())
            else:
                text = recognise_file(picture, language=language, cancel=cancel)
            if text.strip():
                found[number] = text
    if cancel is not None:
        cancel.check()
    pages = tuple(replace(p, text=found.get(p.number, p.text)) for p in parsed.pages)
    parsed = replace(parsed, pages=pages)
    progress(0.95, "Saving the text")
    with library.db.atomic():
        updated = library.replace_content(book_id, parsed=parsed, chunks=make_chunks(parsed.pages))
        _remember(library, book, found)
    log.info("text recognised on %d of %d pages of book %d", len(found), len(empty), book_id)
    progress(1.0, "Done")
    return updated, len(found)


def _remember(library: Library, book: BookInfo, found: dict[int, str]) -> None:
    """Keep what was recognised on each page, for ``keep_recognised`` (a run replaces the
    last one: it read every page without text of its own)."""
    library.db.execute_sql("DELETE FROM ocr_text WHERE book_id = ?", (book.id,))
    for number, text in sorted(found.items()):
        library.db.execute_sql(
            "INSERT INTO ocr_text (book_id, number, sha256, text) VALUES (?, ?, ?, ?)",
            (book.id, number, book.sha256, text),
        )


def keep_recognised(library: Library, book: BookInfo, parsed: ParsedBook) -> ParsedBook:
    """``parsed`` (the book read again from its library copy) with the text recognised
    before on its picture pages: only when the copy is the file that was recognised (same
    SHA-256 and page count: the pictures are the same) and only on pages the new reading
    finds no text on (a page with text of its own keeps it)."""
    rows = library.db.execute_sql(
        "SELECT number, text FROM ocr_text WHERE book_id = ? AND sha256 = ?",
        (book.id, book.sha256),
    ).fetchall()
    if not rows or len(parsed.pages) != book.page_count:
        return parsed
    found = {int(number): str(text) for number, text in rows}
    pages = tuple(
        replace(p, text=found[p.number]) if p.number in found and not p.text.strip() else p
        for p in parsed.pages
    )
    kept = sum(1 for old, new in zip(parsed.pages, pages, strict=True) if old is not new)
    if kept:
        log.info("book %d read again: recognised text kept on %d pages", book.id, kept)
    return replace(parsed, pages=pages)

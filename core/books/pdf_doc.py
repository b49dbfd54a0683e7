"""Opening a PDF with pypdfium2 (with its password, when it has one) and reading what a page,
its labels, its outline and its metadata say. Used in the import's worker processes and in
``core.books.pdf``; a password is passed along in memory only, never stored or logged."""

from __future__ import annotations

import ctypes
import logging
import re
import statistics
from pathlib import Path

from core.books.titles import clean_title
from core.domain.book import TocItem
from core.errors import BookCode, BookError

log = logging.getLogger(__name__)
_SPACES = re.compile(r"[ \t\u00a0]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def password_needed(path: Path) -> BookError:
    return BookError(
        BookCode.PASSWORD,
        f"{path.name} is protected by a password: enter it to open the book.",
        hint="Margin keeps the password only while it is running; it is never saved.",
    )


def wrong_password(path: Path) -> BookError:
    return BookError(
        BookCode.WRONG_PASSWORD,
        f"The password for {path.name} is wrong, so nothing was imported.",
        hint="Check the password (capital letters count) and try again.",
    )


_MAPPED_TO_NOTHING = dict.fromkeys(
    [0xAD, 0x34F, 0x1806, 0x180B, 0x180C, 0x180D, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF]
)
_MAPPED_TO_NOTHING.update(dict.fromkeys(range(0xFE00, 0xFE10)))
_SPACES_TO_SPACE = dict.fromkeys(
    [0xA0, 0x1680, 0x202F, 0x205F, 0x3000, *range(0x2000, 0x200B)], " "
)


def password_variants(password: str | None) -> list[str | None]:
    """The password as typed, then as SASLprep prepares it (what PDF 2.0 encryption expects:
    soft hyphens and joiners dropped, odd spaces made spaces, NFKC), when that differs."""
    import unicodedata

    if not password:
        return [None]
    prepared = unicodedata.normalize(
        "NFKC", password.translate(_MAPPED_TO_NOTHING).translate(_SPACES_TO_SPACE)
    )
    return [password] if prepared == password else [password, prepared]


def open_pdf(path: Path, password: str | None = None):  # type: ignore[no-untyped-def]
    """The pypdfium2 document, or a ``BookError`` saying plainly why it cannot be opened
    (a password is needed, the password is wrong, the file is damaged)."""
    import pypdfium2 as pdfium

    *first, last = password_variants(password)
    for variant in first:
        try:
            return pdfium.PdfDocument(str(path), password=variant)
        except pdfium.PdfiumError:
            continue  # the prepared form may open it
    try:
        return pdfium.PdfDocument(str(path), password=last)
    except pdfium.PdfiumError as exc:
        # pdfium's last-error value is not reset on success, so a stale "password" error can
        # show up for an unrelated file: only trust it when the file really is encrypted.
        text = str(exc).lower()
        if "password" in text and is_encrypted(path):
            raise (wrong_password(path) if password else password_needed(path)) from None
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


def is_encrypted(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            fh.seek(max(0, size - 1024 * 1024))
            tail = fh.read()
            if b"/Encrypt" in tail:
                return True
            fh.seek(0)
            return b"/Encrypt" in fh.read(1024 * 1024)  # a linearized file says it at the top
    except OSError:
        return False


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


def page_text(doc: object, index: int) -> str:
    """The text of one page; a page pdfium cannot read has none (the rest of the book still
    opens: a viewer shows what it can draw)."""
    import pypdfium2 as pdfium

    try:
        page = doc[index]  # type: ignore[index]
    except pdfium.PdfiumError:
        log.info("page %d could not be loaded: it has no text", index + 1)
        return ""
    try:
        textpage = page.get_textpage()
        try:
            return clean_page_text(textpage.get_text_bounded())
        finally:
            textpage.close()
    except pdfium.PdfiumError:
        log.info("the text of page %d could not be read", index + 1)
        return ""
    finally:
        page.close()


def labels(doc: object, count: int) -> list[str]:
    import pypdfium2.raw as raw

    found: list[str] = []
    getter = getattr(raw, "FPDF_GetPageLabel", None)
    for index in range(count):
        label = ""
        if getter is not None:
            size = getter(doc.raw, index, None, 0)  # type: ignore[attr-defined]
            if size > 2:
                buffer = ctypes.create_string_buffer(size)
                getter(doc.raw, index, buffer, size)  # type: ignore[attr-defined]
                label = buffer.raw[: size - 2].decode("utf-16-le", errors="replace").strip()
        found.append(label or str(index + 1))
    return found


def toc(doc: object, count: int) -> list[TocItem]:
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


def meta(doc: object) -> dict[str, str]:
    try:
        return {k: str(v).strip() for k, v in doc.get_metadata_dict().items() if v}  # type: ignore[attr-defined]
    except Exception:
        return {}

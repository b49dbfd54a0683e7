"""Which way a book's pages turn: an EPUB's ``page-progression-direction``, else (the
package's "default") right to left for a book in a right-to-left language, as EPUB Reading
Systems 3.3 asks; left to right otherwise. Read from the book's own file when a view opens
(only the package document: a few ms), so books imported before this was kept turn right
too."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from core.errors import MarginError

log = logging.getLogger(__name__)

# primary language subtags written right to left (Arabic, Hebrew, Persian, Urdu, Yiddish,
# Pashto, Sindhi, Uyghur, Dhivehi, Syriac, Kurdish (Sorani), N'Ko, Aramaic, Mandaic, Samaritan)
RTL_LANGUAGES = frozenset("ar arc ckb dv fa he iw mid nqo ps sam sd syr ug ur yi ji".split())


def rtl_language(language: str) -> bool:
    """``language`` (a BCP 47 tag: "ar", "he-IL", "ku-Arab") is written right to left."""
    parts = language.strip().lower().replace("_", "-").split("-")
    return parts[0] in RTL_LANGUAGES or "arab" in parts[1:] or "hebr" in parts[1:]


def declared_progression(path: Path) -> str:
    """An EPUB's spine ``page-progression-direction`` ("ltr"/"rtl"), "" when it sets none or
    the file cannot be read (the view then turns pages by the book's language)."""
    from core.books.epubpackage import progression
    from core.books.epubzip import EpubArchive, _find_opf, _xml

    try:
        arc = EpubArchive(path)
    except (MarginError, OSError):
        return ""
    try:
        return progression(_xml(arc.read(_find_opf(arc)), path, "package file"))
    except (MarginError, OSError, KeyError, ValueError) as exc:
        log.info("page progression of %s not read: %s", path.name, exc)
        return ""
    finally:
        arc.close()


def progression_of(declared: str, language: str) -> str:
    """ "rtl" or "ltr": what the spine declares, else by the book's language."""
    if declared in ("ltr", "rtl"):
        return declared
    return "rtl" if rtl_language(language) else "ltr"


def page_progression(path: Path | None, fmt: str, language: str) -> str:
    """ "rtl" or "ltr" for a book of format ``fmt`` in ``language`` stored at ``path``."""
    declared = declared_progression(path) if fmt == "epub" and path is not None else ""
    return progression_of(declared, language)


# writing-mode: vertical-rl (or the -epub-/-webkit- forms, or the old tb-rl) in a style sheet
_VERTICAL = re.compile(rb"writing-mode\s*:\s*(?:vertical|tb)", re.IGNORECASE)
_STYLED = (".css",)
MAX_STYLE_BYTES = 4 << 20  # a style sheet read to look for it, at most
VERTICAL_NOTICE = (
    "This book is written vertically (top to bottom, right to left). Margin shows it in "
    "horizontal lines, in the same reading order: its text, search and pages are all there."
)


def vertical_writing(path: Path | None, fmt: str) -> bool:
    """Whether an EPUB's styles set vertical writing (``writing-mode: vertical-rl``), which
    the reader lays out horizontally (``VERTICAL_NOTICE`` says so). Reads the style sheets
    only (a few ms, on opening), stopping at the first that does; False when the file cannot
    be read."""
    if fmt != "epub" or path is None:
        return False
    from core.books.epubzip import EpubArchive

    try:
        arc = EpubArchive(path)
    except (MarginError, OSError):
        return False
    try:
        for name in [n for n in arc.entries if n.lower().endswith(_STYLED)]:
            if arc.entries[name].file_size <= MAX_STYLE_BYTES and _VERTICAL.search(arc.read(name)):
                return True
    except (MarginError, OSError, KeyError, ValueError) as exc:
        log.info("writing mode of %s not read: %s", path.name, exc)
    finally:
        arc.close()
    return False

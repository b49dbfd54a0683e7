"""Whether an EPUB's XHTML documents are well-formed XML, looked at once the book is read.

The reader shows a document that is not well-formed XML as a browser's HTML parser repairs
it, and the import says so (``ImportResult.problems``, the "repaired" line of ``margin
import``). Only that sentence depends on the check (expat over every byte, about a tenth of
parsing a 16 MiB EPUB, holding Python's lock), so the parse leaves it out (issue 41): it
names the documents it did not check (``ParsedBook.extra[UNCHECKED]``) and
``late_problems`` checks them when the book is stored. The problems are the same, in the
same order, as when the parse checked each document itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from core.books.epubdocs import strip_subset, xml_problem
from core.books.limits import DEFAULT_LIMITS, Limits

log = logging.getLogger(__name__)

UNCHECKED = "unchecked"
"""``ParsedBook.extra``'s key for the documents left unchecked: a line each, in reading
order, "OFFSET<tab>PATH" where OFFSET is the length of ``extra["problems"]`` as it was when
the parse read the document (where its problem goes)."""


def unchecked_line(problems: list[str], doc: str) -> str:
    """The ``UNCHECKED`` line of ``doc``, read when ``problems`` were the problems found."""
    offset = sum(map(len, problems)) + 2 * max(len(problems) - 1, 0)  # ("; ".join's length)
    return f"{offset}\t{doc}"


def late_problems(path: Path, extra: dict[str, str], limits: Limits = DEFAULT_LIMITS) -> str:
    """``extra["problems"]`` of the EPUB at ``path`` as the parse made it, with the problems
    of the documents it left unchecked (``extra[UNCHECKED]``) put where it would have put
    them. A document that can no longer be read adds nothing (logged)."""
    known = extra.get("problems", "")
    pending = extra.get(UNCHECKED, "")
    if not pending:
        return known
    from core.books.epubzip import EpubArchive  # (only for a book with documents to check)

    pieces: list[str] = []
    at = 0
    try:
        arc = EpubArchive(path, limits)
    except Exception:
        log.warning("could not read %s again to check its pages", path.name, exc_info=True)
        return known
    try:
        for line in pending.split("\n"):
            offset_text, _, doc = line.partition("\t")
            offset = int(offset_text)
            if offset > at:  # the problems found before this document, after the last
                pieces.append(known[at + 2 : offset] if at else known[:offset])
                at = offset
            try:
                problem = xml_problem(strip_subset(arc.read(doc)))
            except Exception:
                log.warning("could not check %s of %s", doc, path.name, exc_info=True)
                continue
            if problem:
                pieces.append(f"{doc}: {problem}")
    finally:
        arc.close()
    if at < len(known):
        pieces.append(known[at + 2 :] if at else known)
    return "; ".join(pieces)


def checking(
    path: Path, extra: dict[str, str], limits: Limits = DEFAULT_LIMITS
) -> Callable[[], str]:
    """``late_problems(path, extra, limits)`` begun on a thread, while the import stores the
    book (unpacking the documents again, and much of storing, run without Python's lock):
    the function returned waits for it and gives its answer."""
    if UNCHECKED not in extra:
        known = extra.get("problems", "")
        return lambda: known
    found: list[str] = []

    def run() -> None:
        try:
            found.append(late_problems(path, extra, limits))
        except BaseException:  # (late_problems logs what it cannot read; this is a bug)
            log.exception("the pages of %s could not be checked", path.name)

    thread = threading.Thread(target=run, name="margin-epub-check", daemon=True)
    thread.start()

    def result() -> str:
        thread.join()
        return found[0] if found else extra.get("problems", "")

    return result

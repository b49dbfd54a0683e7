"""Highlights, notes and conversations of a book as Markdown, for the reader to keep
elsewhere.

Book text, titles and notes are untrusted: in the file they are plain text (Markdown
punctuation escaped, quotes as escaped blockquotes), and an answer keeps its Markdown but
loses raw HTML, links other than http(s)/mailto and unclosed code fences, so no Markdown
viewer runs a script, loads a picture from the network or swallows the rest of the file.
Files are written through a fresh temporary file in the target folder (``write_text_atomic``).
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import MarginError
from core.export.text import CONTROLS, blockquote, one_line, plain, safe_answer
from core.labels import Labels, cited_pages
from core.store.conversations import ConversationInfo, MessageRecord
from core.store.library import BookInfo, HighlightRecord, Library, NoteRecord


def export_file_name(title: str, what: str, extension: str = ".md") -> str:
    """A file name for an export of ``what`` about the book ``title``: never a path (no
    "/", "\\", ".." or leading dot), no control characters, not too long."""
    name = CONTROLS.sub("", " ".join(title.split()))
    name = re.sub(r'[/\\:*?"<>|\x00]', "-", name).strip(" .-") or "Book"
    return f"{name[:100].rstrip(' .')} — {what}{extension}"


def highlights_to_markdown(
    book: BookInfo,
    highlights: Sequence[HighlightRecord],
    notes: Sequence[NoteRecord] = (),
    labels: Labels = (),
) -> str:
    """Highlights in page order (with their notes), then the reader's and Margin's notes;
    pages with a printed number (``labels``) name it: "p. 7 (p. 40 in print)"."""
    lines = [f"# {one_line(book.title)}", ""]
    if book.author:
        lines += [f"*{one_line(book.author)}*", ""]
    if highlights:
        lines += ["## Highlights", ""]
        for h in sorted(highlights, key=lambda h: (h.page, h.id)):
            where = cited_pages(h.page, h.page, labels)
            lines += [f"**{where}** ({one_line(h.colour)})", "", blockquote(h.text), ""]
            if h.note.strip():
                lines += [f"Note: {plain(h.note.strip())}", ""]
    reader = [n for n in notes if n.source != "agent"]
    agent = [n for n in notes if n.source == "agent"]
    for heading, group in (("## Notes", reader), ("## Notes saved by Margin's assistant", agent)):
        if group:
            lines += [heading, ""]
            for n in group:
                where = f"**{cited_pages(n.page, n.page, labels)}** " if n.page else ""
                lines += [f"- {where}{one_line(n.text)}"]
            lines.append("")
    if not highlights and not notes:
        lines += ["No highlights or notes yet.", ""]
    return "\n".join(lines).rstrip() + "\n"


def export_highlights(library: Library, book_id: int, path: Path) -> Path:
    book = library.get_book(book_id)
    text = highlights_to_markdown(
        book,
        library.list_highlights(book_id),
        library.list_notes(book_id),
        library.page_labels(book_id),
    )
    return write_text_atomic(path, text)


# conversations ------------------------------------------------------------------------------


def answer_sources(record: MessageRecord, labels: Labels = ()) -> list[dict[str, Any]]:
    """The passages an answer cited, with their pages ("p. 7 (p. 40 in print)" when the
    book's ``labels`` give a printed page) and exact quotes: its citations, and for each
    cited page the passage the tools returned for it (quote from the book)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[int, int, str]] = set()
    for c in record.citations:
        quote = c.quoted_text.strip()
        if not quote:
            source = next(
                (
                    p
                    for p in record.passages
                    if p.first_page <= c.first_page <= p.last_page and p.quote
                ),
                None,
            )
            quote = source.quote if source is not None else ""
        key = (c.first_page, c.last_page, quote)
        if key in seen:
            continue
        seen.add(key)
        out.append(
            {
                "pages": cited_pages(c.first_page, c.last_page, labels),
                "first_page": c.first_page,
                "last_page": c.last_page,
                "quote": quote,
            }
        )
    return out


def answer_passages(record: MessageRecord, labels: Labels = ()) -> list[dict[str, Any]]:
    """Every passage the tools returned for an answer (what "Show sources" lists)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[int, int, str]] = set()
    for p in record.passages:
        quote = p.quote or " ".join(p.text.split())[:200]
        key = (p.first_page, p.last_page, quote)
        if key not in seen:
            seen.add(key)
            out.append(
                {
                    "pages": cited_pages(p.first_page, p.last_page, labels),
                    "first_page": p.first_page,
                    "last_page": p.last_page,
                    "quote": quote,
                }
            )
    return out


def conversation_to_markdown(
    book: BookInfo,
    conversation: ConversationInfo,
    records: Sequence[MessageRecord],
    labels: Labels = (),
) -> str:
    """Questions, answers (held-back sentences stay hidden), and the quoted passages each
    answer cited with their page labels."""
    from core.agent.answer import fill_hidden

    lines = [f"## {one_line(conversation.title)}", ""]
    lines += [f"*About {one_line(book.title)} · {conversation.created_at:%Y-%m-%d}*", ""]
    quote = getattr(conversation, "quote", None)
    if quote is not None:  # a thread: the passage it is about
        lost = " — its words were not found when the book was read again" if quote.lost else ""
        where = cited_pages(quote.page, quote.page, labels)
        lines += [f"Thread about {where}{lost}:", "", blockquote(quote.exact), ""]
    for r in records:
        if r.role == "user":
            lines += [f"**Question:** {plain(r.text.strip())}", ""]
            if r.selection_text and r.selection_text.strip()[:40] not in r.text:
                page = r.selection_page
                where = f" ({cited_pages(page, page, labels)})" if page else ""
                lines += [blockquote(r.selection_text) + where, ""]
            continue
        text = fill_hidden(r.text, r.withheld).strip()
        lines += ["**Answer:**", ""]
        if text:
            lines += [safe_answer(text), ""]
        if r.status not in ("complete", "running"):
            why = f" {plain(r.error.message)}" if r.error is not None else ""
            lines += [f"*({r.status}.{why})*", ""]
        sources = answer_sources(r, labels)
        if sources:
            lines += ["Sources:", ""]
            for s in sources:
                quote = f": “{one_line(s['quote'])}”" if s["quote"] else ""
                lines.append(f"- {one_line(s['pages'])}{quote}")
            lines.append("")
    if not records:
        lines += ["No questions yet.", ""]
    return "\n".join(lines)


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all: through a new temporary file in the
    same folder (created exclusively, so a planted symlink or a file of the reader's own is
    never followed or reused), renamed over ``path`` (a symlink there is replaced, not
    followed). On any failure (a full disk) the temporary file is removed."""
    path = Path(path)
    folder = path.parent
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise _write_failed(path, exc) from exc
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _write_failed(path, exc) from exc
        raise
    return path


def _write_failed(path: Path, exc: OSError) -> MarginError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return MarginError(
            "disk_full",
            f"The disk is full: Margin could not save {path.name}.",
            hint="Free some space on the disk and try again; nothing was written.",
        )
    return MarginError(
        "export_failed",
        f"Margin could not write {path} ({exc.strerror or exc}).",
        hint="Choose a folder you can write to.",
    )


def conversation_markdown(app: Any, conversation_id: int) -> str:
    conversation = app.conversations.get(conversation_id)
    book = app.library.get_book(conversation.book_id)
    body = conversation_to_markdown(
        book,
        conversation,
        app.conversations.history(conversation_id),
        app.library.page_labels(book.id),
    )
    return f"# {one_line(book.title)}\n\n{body.rstrip()}\n"


def book_conversations_markdown(app: Any, book_id: int) -> str:
    book = app.library.get_book(book_id)
    threads = app.conversations.threads(book_id)  # in book order, then the free ones
    free = [c for c in app.conversations.list_for_book(book_id) if c.quote is None]
    conversations = threads + sorted(free, key=lambda c: c.id)
    parts = [f"# {one_line(book.title)} — conversations", ""]
    labels = app.library.page_labels(book_id)
    if not conversations:
        parts += ["No conversations about this book yet.", ""]
    for c in conversations:
        parts += [conversation_to_markdown(book, c, app.conversations.history(c.id), labels), ""]

    from core.companions.export import companions_markdown  # X-Ray and recap: not at start-up

    parts.append(companions_markdown(app.library.db, book_id))
    return "\n".join(parts).rstrip() + "\n"


def export_conversation(app: Any, conversation_id: int, path: Path) -> Path:
    return write_text_atomic(path, conversation_markdown(app, conversation_id))


def export_book_conversations(app: Any, book_id: int, path: Path) -> Path:
    return write_text_atomic(path, book_conversations_markdown(app, book_id))

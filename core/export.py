"""Highlights, notes and conversations of a book as Markdown, for the reader to keep
elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.labels import pages_label
from core.store.conversations import ConversationInfo, MessageRecord
from core.store.library import BookInfo, HighlightRecord, Library, NoteRecord


def _quote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.strip().splitlines())


def highlights_to_markdown(
    book: BookInfo, highlights: Sequence[HighlightRecord], notes: Sequence[NoteRecord] = ()
) -> str:
    """Highlights in page order (with their notes), then the reader's and Margin's notes."""
    lines = [f"# {book.title}", ""]
    if book.author:
        lines += [f"*{book.author}*", ""]
    if highlights:
        lines += ["## Highlights", ""]
        for h in sorted(highlights, key=lambda h: (h.page, h.id)):
            lines += [f"**p. {h.page}** ({h.colour})", "", _quote(h.text), ""]
            if h.note.strip():
                lines += [f"Note: {h.note.strip()}", ""]
    reader = [n for n in notes if n.source != "agent"]
    agent = [n for n in notes if n.source == "agent"]
    for heading, group in (("## Notes", reader), ("## Notes saved by Margin's assistant", agent)):
        if group:
            lines += [heading, ""]
            for n in group:
                where = f"**p. {n.page}** " if n.page else ""
                lines += [f"- {where}{n.text.strip()}"]
            lines.append("")
    if not highlights and not notes:
        lines += ["No highlights or notes yet.", ""]
    return "\n".join(lines).rstrip() + "\n"


def export_highlights(library: Library, book_id: int, path: Path) -> Path:
    book = library.get_book(book_id)
    text = highlights_to_markdown(
        book, library.list_highlights(book_id), library.list_notes(book_id)
    )
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


# conversations ------------------------------------------------------------------------------


def answer_sources(record: MessageRecord) -> list[dict[str, Any]]:
    """The passages an answer cited, with their pages and exact quotes: its citations, and
    for each cited page the passage the tools returned for it (quote from the book)."""
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
                "pages": pages_label(c.first_page, c.last_page),
                "first_page": c.first_page,
                "last_page": c.last_page,
                "quote": quote,
            }
        )
    return out


def answer_passages(record: MessageRecord) -> list[dict[str, Any]]:
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
                    "pages": p.label,
                    "first_page": p.first_page,
                    "last_page": p.last_page,
                    "quote": quote,
                }
            )
    return out


def conversation_to_markdown(
    book: BookInfo, conversation: ConversationInfo, records: Sequence[MessageRecord]
) -> str:
    """Questions, answers (held-back sentences stay hidden), and the quoted passages each
    answer cited with their page labels."""
    from core.agent.answer import fill_hidden

    lines = [f"## {conversation.title}", ""]
    lines += [f"*About {book.title} · {conversation.created_at:%Y-%m-%d}*", ""]
    for r in records:
        if r.role == "user":
            lines += [f"**Question:** {r.text.strip()}", ""]
            if r.selection_text and r.selection_text.strip()[:40] not in r.text:
                lines += [_quote(r.selection_text) + f" (p. {r.selection_page})", ""]
            continue
        text = fill_hidden(r.text, r.withheld).strip()
        lines += ["**Answer:**", ""]
        if text:
            lines += [text, ""]
        if r.status not in ("complete", "running"):
            why = f" {r.error.message}" if r.error is not None else ""
            lines += [f"*({r.status}.{why})*", ""]
        sources = answer_sources(r)
        if sources:
            lines += ["Sources:", ""]
            for s in sources:
                quote = f": “{' '.join(s['quote'].split())}”" if s["quote"] else ""
                lines.append(f"- {s['pages']}{quote}")
            lines.append("")
    if not records:
        lines += ["No questions yet.", ""]
    return "\n".join(lines)


def write_text_atomic(path: Path, text: str) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return path


def conversation_markdown(app: Any, conversation_id: int) -> str:
    conversation = app.conversations.get(conversation_id)
    book = app.library.get_book(conversation.book_id)
    body = conversation_to_markdown(book, conversation, app.conversations.history(conversation_id))
    return f"# {book.title}\n\n{body.rstrip()}\n"


def book_conversations_markdown(app: Any, book_id: int) -> str:
    book = app.library.get_book(book_id)
    conversations = sorted(app.conversations.list_for_book(book_id), key=lambda c: c.id)
    parts = [f"# {book.title} — conversations", ""]
    if not conversations:
        parts += ["No conversations about this book yet.", ""]
    for c in conversations:
        parts += [conversation_to_markdown(book, c, app.conversations.history(c.id)), ""]
    return "\n".join(parts).rstrip() + "\n"


def export_conversation(app: Any, conversation_id: int, path: Path) -> Path:
    return write_text_atomic(path, conversation_markdown(app, conversation_id))


def export_book_conversations(app: Any, book_id: int, path: Path) -> Path:
    return write_text_atomic(path, book_conversations_markdown(app, book_id))

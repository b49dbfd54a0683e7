"""Highlights and notes of a book as Markdown, for the reader to keep elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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

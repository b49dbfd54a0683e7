"""The X-Ray and the story so far as Markdown, for the book's export (``margin
export-conversation --book``): made from what the reader has read, as the tabs show them."""

from __future__ import annotations

import peewee as pw

from core.companions import recap, xray
from core.export.text import one_line, plain


def companions_markdown(db: pw.SqliteDatabase, book_id: int) -> str:
    """ "## X-Ray" and "## The story so far" of the book at its bound ("" when neither has
    anything yet). Book text is escaped as the rest of the export is."""

    def quote(text: str) -> str:
        return "> " + plain(" ".join(text.split()))

    made = xray.current(db, book_id)
    story = recap.stored(db, book_id) or recap.recap(db, book_id)
    parts: list[str] = []
    if made.entries:
        parts += [f"## X-Ray (pages 1–{made.read_to})", ""]
        for entry in made.entries:
            also = f" (also {one_line(', '.join(entry.aliases))})" if entry.aliases else ""
            parts.append(
                f"### {one_line(entry.name)}{also}\n\n{entry.kind.capitalize()}, "
                f"{entry.uses} mentions, first on p. {entry.first_page}."
            )
            if entry.note:
                parts += ["", plain(entry.note)]
            for page, sentence in entry.description:
                parts += ["", f"{quote(sentence)} (p. {page})"]
            parts.append("")
    if story.chapters:
        parts += [f"## The story so far (pages 1–{story.read_to})", ""]
        for c in story.chapters:
            parts += [
                f"### {one_line(c.chapter.title)} (pp. {c.chapter.first}–{c.chapter.last})",
                "",
            ]
            if c.state == "current":
                parts += [f"*Read to p. {c.read_to}; summarised when finished.*", ""]
            elif c.text:
                parts += [plain(c.text), ""]
            else:
                parts += [f"- {plain(s)} (p. {p})" for p, s in c.sentences] + [""]
    return "\n".join(parts).rstrip() + "\n" if parts else ""

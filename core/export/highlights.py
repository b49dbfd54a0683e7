"""Highlights for people to paste or keep: one quoted with its citation ("…" — *Title*,
p. 40), and a chapter's or a whole book's highlights as Markdown, grouped by chapter, each
with its page, colour, style and note. Qt-free (the window and the CLI share it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.store.library import BookInfo, HighlightRecord

STYLE_WORDS = {"underline": "underlined", "strike": "struck through"}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _escape(text: str) -> str:
    """Markdown's emphasis and link characters as plain text."""
    for ch in "\\*_[]`":
        text = text.replace(ch, "\\" + ch)
    return text


def citation(text: str, title: str, page: str) -> str:
    """“the words” — *Title*, p. 40 (``page`` as the book prints it: "40", "xii")."""
    return f"“{_one_line(text)}” — *{_escape(_one_line(title))}*, p. {page}"


def highlights_markdown(
    book: BookInfo,
    highlights: Sequence[HighlightRecord],
    *,
    page_label: Callable[[int], str] = str,
    chapter_of: Callable[[int], str] = lambda page: "",
    scope: str = "",
) -> str:
    """``highlights`` (a chapter's or the whole book's) in page order under their chapters.
    ``scope`` names what was exported ("Chapter III. …") under the title; empty for all."""
    lines = [f"# {_escape(_one_line(book.title))}", ""]
    if book.author:
        lines += [f"*{_escape(_one_line(book.author))}*", ""]
    if scope:
        lines += [f"Highlights from {_escape(_one_line(scope))}", ""]
    if not highlights:
        return "\n".join([*lines, "No highlights yet.", ""])
    chapter = None
    for h in sorted(highlights, key=lambda h: (h.page, h.id)):
        here = _one_line(chapter_of(h.page))
        if here != chapter and here:
            lines += [f"## {_escape(here)}", ""]
        chapter = here
        quote = "\n".join(f"> {_escape(line)}" if line else ">" for line in h.text.splitlines())
        look = ", ".join(w for w in (h.colour, STYLE_WORDS.get(h.style, "")) if w)
        lines += [quote, "", f"— p. {page_label(h.page)} ({look})", ""]
        if h.note.strip():
            lines += [f"**Note:** {_escape(_one_line(h.note))}", ""]
    return "\n".join(lines).rstrip() + "\n"

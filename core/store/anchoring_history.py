"""After a book is read again, the conversations about it name its new pages: what the model
re-reads as history (an answer's text and its citations, the passages the tools returned and
the pages it asked them for, a selection's page, "pages after N are hidden") is rewritten in the stored messages, in the
same transaction that moved the answers' page chips (``anchoring.reanchor``).

Rewriting once, where the pages moved, keeps every reader of the stored messages consistent —
the history sent to the model, the spoiler check's "which answers drew on pages past the
bound", exports — with no old-to-new map to keep. An answer's page labels (``[p. 40]``)
follow its moved citation of those pages; any other page follows the words it starts with;
a passage follows its own first and last words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import peewee as pw

from core.labels import pages_label
from core.store.anchors import BookText, TextQuote, collapse, moved

# what a model writes and the reader sees as a page chip: [p. 12], [pp. 12–13]
_LABEL = re.compile(r"\[(p|pp)\.\s*(\d+)(?:(\s*[–-]\s*)(\d+))?\]")
EDGE = 100  # characters of a passage's start and end it is found again by
_PAGE_ARGUMENTS = {"read_pages": ("start", "end"), "save_note": ("page",)}  # tools' pages

Span = tuple[int, int]


class PageMover:
    """Old pages to new ones: a page by its first words (each looked up once), a passage by
    its own words, clamped to the book."""

    def __init__(self, old: BookText, new: BookText, last: int) -> None:
        self.old, self.new, self.last = old, new, max(1, last)
        self._pages: dict[int, int] = {}

    def _clamp(self, page: int) -> int:
        return max(1, min(page, self.last))

    def page(self, page: int) -> int:
        if page not in self._pages:
            found = None
            quote = self.old.page_start_quote(page) if page in self.old.numbers else None
            if quote is not None and quote.exact:
                found = moved(self.old, self.new, quote)
            self._pages[page] = self._clamp(found.quote.page if found else page)
        return self._pages[page]

    def span(self, first: int, last: int) -> Span:
        new_first = self.page(first)
        return new_first, max(new_first, self.page(last) if last != first else new_first)

    def words(self, text: str, first: int, last: int) -> Span:
        """Where a passage of ``first``..``last`` with ``text`` is now."""
        words = collapse(text)
        if len(words) < 20:
            return self.span(first, last)
        head = moved(self.old, self.new, TextQuote(words[:EDGE], page=first))
        tail = moved(self.old, self.new, TextQuote(words[-EDGE:], page=last))
        if head is None or tail is None or tail.quote.end_page < head.quote.page:
            return self.span(first, last)
        return self._clamp(head.quote.page), self._clamp(tail.quote.end_page)


def relabel(text: str, spans: Callable[[int, int], Span]) -> str:
    """``text`` with each page label ``[p. N]`` / ``[pp. N–M]`` naming the pages ``spans``
    gives for it."""

    def swap(match: re.Match[str]) -> str:
        first = int(match.group(2))
        last = int(match.group(4) or first)
        new_first, new_last = spans(first, last)
        if new_first == new_last and first == last:
            return f"[{match.group(1)}. {new_first}]"
        return f"[{pages_label(new_first, new_last)}]"

    return _LABEL.sub(swap, text)


def _retitle(title: str, before: Span, after: Span) -> str:
    old_label = pages_label(*before)
    return title.replace(old_label, pages_label(*after)) if old_label in title else title


class _Rewriter:
    """One message's content parts, walked and rewritten in place."""

    def __init__(
        self,
        book_id: int,
        mover: PageMover,
        cited: Mapping[Span, Span],
        quoted: Mapping[str, Span],
    ) -> None:
        self.book_id, self.mover, self.cited, self.quoted = book_id, mover, cited, quoted
        self.selection_page: int | None = None  # a question's selection, where it is now

    def spans(self, first: int, last: int) -> Span:
        return self.cited.get((first, last)) or self.mover.span(first, last)

    def parts(self, parts: Any) -> None:
        if not isinstance(parts, list):
            return
        for part in parts:
            if isinstance(part, dict):
                self.part(part)

    def _ours(self, item: Mapping[str, Any]) -> bool:
        try:
            return int(item.get("book_id", self.book_id)) == self.book_id
        except (TypeError, ValueError):
            return False

    def part(self, part: dict[str, Any]) -> None:
        kind = part.get("kind")
        try:
            if kind == "text":
                if isinstance(part.get("text"), str):
                    part["text"] = relabel(part["text"], self.spans)
                for cite in part.get("citations") or []:
                    if isinstance(cite, dict) and self._ours(cite):
                        self.citation(cite)
            elif kind == "passage" and self._ours(part):
                before = (int(part["first_page"]), int(part["last_page"]))
                after = self.mover.words(str(part.get("text", "")), *before)
                part["first_page"], part["last_page"] = after
                part["title"] = _retitle(str(part.get("title", "")), before, after)
            elif kind == "passages":
                self.parts(part.get("passages"))
            elif kind == "tool_result":
                self.parts(part.get("parts"))
            elif kind == "question" and isinstance(part.get("selection"), dict):
                selection = part["selection"]
                page = int(selection["page"])
                found = moved(
                    self.mover.old,
                    self.mover.new,
                    TextQuote(collapse(str(selection.get("text", ""))), page=page),
                )
                selection["page"] = found.quote.page if found else self.mover.page(page)
                self.selection_page = int(selection["page"])
            elif kind == "hidden_after":
                part["page"] = self.mover.page(int(part["page"]))
            elif kind == "tool_call" and isinstance(part.get("arguments"), dict):
                # the model's own request, as its result (moved above) now answers it
                arguments = part["arguments"]
                for key in _PAGE_ARGUMENTS.get(str(part.get("name")), ()):
                    if isinstance(arguments.get(key), int):
                        arguments[key] = self.mover.page(arguments[key])
        except (KeyError, TypeError, ValueError):
            return  # a part this version does not know the shape of: left as it was

    def citation(self, cite: dict[str, Any]) -> None:
        """A citation as the model gave it: where its chip (the same quote) now is."""
        first, last = int(cite["first_page"]), int(cite["last_page"])
        chip = self.quoted.get(str(cite.get("quoted_text", "")))
        cite["first_page"], cite["last_page"] = chip or self.spans(first, last)


def move_history(
    db: pw.SqliteDatabase,
    book_id: int,
    mover: PageMover,
    cited: Mapping[int, Mapping[Span, Span]],
    quoted: Mapping[int, Mapping[str, Span]],
) -> int:
    """Rewrite the pages in the stored messages of ``book_id``'s conversations; ``cited``:
    per answer message, its citations' old pages → new pages (as ``reanchor`` moved them),
    ``quoted``: their quotes as the model gave them → new pages. Returns how many messages
    changed."""
    updates: list[tuple[str, str, int | None, int]] = []
    for mid, role, raw, text in db.execute_sql(
        "SELECT m.id, m.role, m.content, m.text FROM message m"
        " JOIN conversation c ON c.id = m.conversation_id WHERE c.book_id = ?",
        (book_id,),
    ).fetchall():
        try:
            parts = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            continue
        rewriter = _Rewriter(book_id, mover, cited.get(int(mid), {}), quoted.get(int(mid), {}))
        before = json.dumps(parts, ensure_ascii=False)
        rewriter.parts(parts)
        after = json.dumps(parts, ensure_ascii=False)
        new_text = relabel(text, rewriter.spans) if role == "assistant" and text else text
        if after != before or new_text != text:
            updates.append((after, new_text, rewriter.selection_page, int(mid)))
    db.cursor().executemany(
        "UPDATE message SET content = ?, text = ?,"
        " selection_page = COALESCE(?, selection_page) WHERE id = ?",
        updates,
    )
    return len(updates)

"""A book's highlights and threads for other tools: JSON records with each anchor as a
W3C TextQuoteSelector (``margin highlights BOOK --json``), and a W3C Web Annotation
collection in JSON-LD (``margin highlights BOOK --w3c``), as Hypothesis and other annotation
tools read them. The target is the book file by its SHA-256 (``urn:sha256:…``); the page and
offset hint ride along under ``margin:`` keys that other tools ignore."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from core.labels import Labels, printed_pages
from core.store.anchors import TextQuote, collapse
from core.store.library import BookInfo, HighlightRecord

CONTEXT = "http://www.w3.org/ns/anno.jsonld"
MARGIN_NS = "https://margin.invalid/ns#"  # names our own keys; never fetched


def _time(when: dt.datetime) -> str:
    return when.replace(microsecond=0).isoformat() + "Z"


def _quote_of(h: HighlightRecord) -> TextQuote:
    return h.quote or TextQuote(collapse(h.text), page=h.page, end_page=h.page)


def _target(book: BookInfo, quote: TextQuote) -> dict[str, Any]:
    return {
        "source": f"urn:sha256:{book.sha256}",
        "selector": quote.selector(),
        "margin:page": quote.page,
        "margin:start": quote.start,
        "margin:endPage": quote.end_page or quote.page,
        "margin:end": quote.end,
        **({"margin:lost": True} if quote.lost else {}),
    }


def highlight_json(h: HighlightRecord, labels: Labels = ()) -> dict[str, Any]:
    """One highlight as ``margin highlights --json`` prints it (``printed_page``: the paper
    book's page number, from ``labels``, "" when the book has none for it)."""
    quote = _quote_of(h)
    printed = printed_pages(h.page, h.page, labels)
    return {
        "id": h.id,
        "book_id": h.book_id,
        "page": h.page,
        "printed_page": printed.removeprefix("p. ").removesuffix(" in print"),
        "text": h.text,
        "note": h.note,
        "colour": h.colour,
        "created_at": _time(h.created_at),
        "selector": quote.selector(),
        "position": {
            "page": quote.page,
            "start": quote.start,
            "end_page": quote.end_page or quote.page,
            "end": quote.end,
        },
        "lost": quote.lost,
        "anchor": h.anchor,  # where the reader's view drew it (view offsets, or PDF polygons)
    }


def highlight_annotation(book: BookInfo, h: HighlightRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": f"urn:margin:book:{book.sha256}:highlight:{h.id}",
        "type": "Annotation",
        "motivation": "commenting" if h.note.strip() else "highlighting",
        "created": _time(h.created_at),
        "target": _target(book, _quote_of(h)),
        "margin:colour": h.colour,
    }
    if h.note.strip():
        out["body"] = {"type": "TextualBody", "value": h.note, "format": "text/plain"}
    return out


def thread_annotation(book: BookInfo, thread: Any, records: list[Any]) -> dict[str, Any]:
    """A thread: the passage as its target, its questions and answers as bodies."""
    bodies = []
    for r in records:
        if not r.text.strip():
            continue
        bodies.append(
            {
                "type": "TextualBody",
                "value": r.text,
                "format": "text/markdown" if r.role == "assistant" else "text/plain",
                "purpose": "replying" if r.role == "assistant" else "questioning",
                "creator": {"type": "Software", "name": "Margin"}
                if r.role == "assistant"
                else {"type": "Person"},
                "created": _time(r.created_at),
            }
        )
    return {
        "id": f"urn:margin:book:{book.sha256}:thread:{thread.id}",
        "type": "Annotation",
        "motivation": "questioning",
        "created": _time(thread.created_at),
        "modified": _time(thread.updated_at),
        "body": bodies,
        "target": _target(book, thread.quote),
        "margin:title": thread.title,
    }


def note_annotations(app: Any, book: BookInfo) -> list[dict[str, Any]]:
    """Notes about a page, at the page's first words (Margin's own notes say so)."""
    out = []
    for note_id, text, raw, created, source in app.library.db.execute_sql(
        "SELECT id, text, quote, created_at, source FROM note WHERE book_id = ?"
        " AND quote IS NOT NULL ORDER BY id",
        (book.id,),
    ).fetchall():
        quote = TextQuote.from_json(json.loads(raw))
        if quote is None:
            continue
        out.append(
            {
                "id": f"urn:margin:book:{book.sha256}:note:{note_id}",
                "type": "Annotation",
                "motivation": "commenting",
                "created": str(created).replace(" ", "T").split(".")[0] + "Z",
                "body": {"type": "TextualBody", "value": text, "format": "text/plain"},
                "target": _target(book, quote),
                "margin:source": source,
            }
        )
    return out


def annotation_collection(app: Any, book_id: int) -> dict[str, Any]:
    """The book's highlights, notes about a page and threads as a W3C Web Annotation
    collection (JSON-LD)."""
    book = app.library.get_book(book_id)
    items = [highlight_annotation(book, h) for h in app.library.list_highlights(book_id)]
    items += note_annotations(app, book)
    for thread in app.conversations.threads(book_id):
        items.append(thread_annotation(book, thread, app.conversations.history(thread.id)))
    items.sort(key=lambda a: (a["target"]["margin:page"], a["target"]["margin:start"]))
    return {
        "@context": [CONTEXT, {"margin": MARGIN_NS}],
        "id": f"urn:margin:book:{book.sha256}:annotations",
        "type": "AnnotationCollection",
        "label": f"{book.title} — highlights, notes and threads",
        "total": len(items),
        "first": {"type": "AnnotationPage", "startIndex": 0, "items": items},
    }

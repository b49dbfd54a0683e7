"""Re-reading a book whose pages changed keeps highlights, notes, threads, citations and
``read_to`` on their words (core/store/anchoring.py), and lists what is gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.books import parse as parse_module
from core.books.importer import import_book, reimport_book
from core.domain.messages import AssistantMessage, CitationRef, Question, TextPart, Usage
from core.store.anchors import BookText, TextQuote, collapse, moved, stored_to_view
from core.store.conversations import Conversations
from core.store.library import Library

OLD_TARGET = 1400  # an "older version" cut pages of about 1,400 characters


def _old_import(
    library: Library,
    books_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str = "alice_in_wonderland.txt",
) -> int:
    with monkeypatch.context() as patch:
        patch.setattr(parse_module, "PAGE_TARGET", OLD_TARGET)
        return import_book(library, books_dir / name).book.id


def _on_its_page(library: Library, book_id: int, page: int, words: str) -> bool:
    return collapse(words) in collapse(library.page(book_id, page).text)


def _answer(conversations: Conversations, conversation_id: int, cite: CitationRef) -> None:
    ids = conversations.start_run(
        conversation_id, provider="passages", model="p", strategy="s", question=Question("q")
    )
    conversations.finish(
        conversation_id=conversation_id,
        ids=ids,
        status="complete",
        message=AssistantMessage((TextPart("See this.", (cite,)),)),
        text="See this.",
        citations=(cite,),
        steps=1,
        usage=Usage(),
        stop_reason="end_turn",
    )


@pytest.mark.parametrize("name", ["alice_in_wonderland.txt", "alice_in_wonderland.epub"])
def test_reimport_with_other_pages_keeps_everything_on_its_words(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    book_id = _old_import(library, books_dir, monkeypatch, name)
    old = library.get_book(book_id)
    texts = dict(library.page_texts(book_id))
    conversations = Conversations(library.db)
    # highlights as the text view saves them (view offsets), at the start, middle and end
    picked = []
    for page in (3, old.page_count // 2, old.page_count - 2):
        text = texts[page]
        start = text.index(". ") + 2
        end = start + 80
        words = text[start:end]
        anchor = {
            "start": {"page": page, "offset": stored_to_view(text, start)},
            "end": {"page": page, "offset": stored_to_view(text, end)},
        }
        picked.append(library.add_highlight(book_id, page, words, anchor=anchor, note="mine"))
    note = library.add_note(book_id, "a note about this page", page=old.page_count // 3)
    note_words = collapse(texts[note.page or 1])[:40]
    thread_page = old.page_count // 2 + 5
    thread_words = collapse(texts[thread_page])[100:170].strip()
    thread = conversations.thread_for(book_id, thread_words, thread_page)
    cite_page = old.page_count - 10
    cite_words = collapse(texts[cite_page])[200:260].strip()
    _answer(conversations, thread.id, CitationRef(book_id, cite_page, cite_page, cite_words))
    library.set_position(book_id, old.page_count - 5)
    read_to_words = collapse(texts[old.page_count - 5])[-40:]

    updated = reimport_book(library, book_id)

    assert updated.page_count < old.page_count, "the book was cut into other pages"
    for h in library.list_highlights(book_id):
        assert _on_its_page(library, book_id, h.page, h.text), h
        quote = TextQuote.from_json(library_quote(library, "highlight", h.id))
        assert quote is not None and quote.exact == collapse(h.text) and not quote.lost
        stored = library.page(book_id, h.page).text
        assert collapse(stored[quote.start : quote.end]) == quote.exact, "offsets follow"
        assert h.note == "mine"
    assert [h.page for h in library.list_highlights(book_id)] != [h.page for h in picked]
    moved_note = library.list_notes(book_id)[0]
    assert _on_its_page(library, book_id, moved_note.page or 0, note_words)
    [moved_thread] = conversations.threads(book_id)
    assert moved_thread.quote is not None
    assert _on_its_page(library, book_id, moved_thread.quote.page, thread_words)
    assert moved_thread.about.startswith(f"About p. {moved_thread.quote.page}: “")
    [answer] = [r for r in conversations.history(thread.id) if r.role == "assistant"]
    [cite] = answer.citations
    assert cite.exact == cite_words
    assert _on_its_page(library, book_id, cite.first_page, cite_words)
    assert collapse(library.page(book_id, cite.first_page).text[cite.start :]).startswith(
        cite_words
    )
    after = library.get_book(book_id)
    assert _on_its_page(library, book_id, after.read_to, read_to_words), "read_to follows"
    assert after.read_to != old.page_count - 5
    assert library.lost_anchors(book_id) == []


def library_quote(library: Library, table: str, row_id: int) -> object:
    import json

    row = library.db.execute_sql(f"SELECT quote FROM {table} WHERE id = ?", (row_id,)).fetchone()
    return json.loads(row[0])


def test_words_no_longer_in_the_book_are_listed_not_moved(
    library: Library, books_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    book_id = _old_import(library, books_dir, monkeypatch)
    gone = library.add_highlight(book_id, 7, "Zyxwv the grumbling quasar of Pomerania")
    changed_words = collapse(library.page(book_id, 20).text)[50:140]
    changed = library.add_highlight(book_id, 20, changed_words.replace(" the ", " teh ", 1))
    reimport_book(library, book_id)
    lost = library.lost_anchors(book_id)
    assert [(a.kind, a.id, a.page) for a in lost] == [("highlight", gone.id, 7)]
    assert "quasar" in lost[0].text
    kept = {h.id: h for h in library.list_highlights(book_id)}
    assert kept[gone.id].page == 7, "kept where it was, not guessed"
    assert _on_its_page(library, book_id, kept[changed.id].page, changed_words), "fuzzy"


def test_a_quote_twice_on_a_page_anchors_the_one_asked_for() -> None:
    text = "He said yes. Then she laughed. Later he said yes. She did not laugh."
    book = BookText([(1, "Before."), (2, text), (3, "After.")])
    second = text.rindex("he said yes")
    quote = book.quote_of("he said yes", 2, near=second)
    assert quote is not None and (quote.page, quote.start) == (2, second)
    first = book.quote_of("he said yes", 2)
    assert first is not None and first.start == text.index("he said yes")
    # found again by its context, not by being first
    moved = BookText([(1, "Before. " + text[:30]), (2, text[30:] + " After.")])
    found = moved.find(quote, expected=0)
    assert found is not None and found.quote.prefix.endswith("laughed. Later ")


def test_a_short_quote_whose_paragraph_is_gone_is_lost_not_moved() -> None:
    """Issue 46 item 5: the paragraph of "in the ledger by the window." was deleted; the same
    words stand in a neighbouring paragraph with other words around them. Not moved: lost."""
    kept = "She opened the shutters and the morning came in. " * 3
    first = "The clerk wrote the sum twice in the ledger by the window. He was tired."
    second = "Years later his daughter found a pressed flower in the ledger by the window. "
    old = BookText([(1, kept), (2, first), (3, second + "Nobody knew who had put it there.")])
    at = first.index("in the ledger")
    quote = old.quote(2, at, 2, at + len("in the ledger by the window."))
    new = BookText([(1, kept), (2, second + "Nobody knew who had put it there.")])
    assert moved(old, new, quote) is None
    # its paragraph kept, the pages around it changed: it moves, its surroundings agree
    changed = BookText([(1, kept + " A new line."), (2, "Preface. " + first), (3, second)])
    found = moved(old, changed, quote)
    assert found is not None and found.quote.page == 2
    assert "sum twice" in found.quote.prefix


def test_a_reimported_note_whose_paragraph_is_gone_is_listed_by_margin_lost(
    library: Library, tmp_path: Path
) -> None:
    paragraphs = [f"Paragraph {i} tells of the harbour, the boats and the rain." for i in range(40)]
    first = "The clerk wrote the sum twice in the ledger by the window. He was tired."
    second = "Years later his daughter found a flower in the ledger by the window. Nobody knew."
    path = tmp_path / "ledger.txt"
    path.write_text("\n\n".join([*paragraphs[:20], first, second, *paragraphs[20:]]), "utf-8")
    book_id = import_book(library, path).book.id
    page = next(n for n, t in library.page_texts(book_id) if "sum twice" in t)
    highlight = library.add_highlight(book_id, page, "in the ledger by the window.")
    quote = TextQuote.from_json(library_quote(library, "highlight", highlight.id))
    assert quote is not None and "sum twice" in quote.prefix  # the first one
    copy = Path(library.get_book(book_id).file_path or "")  # the library's own copy, edited
    copy.write_text("\n\n".join([*paragraphs[:20], second, *paragraphs[20:]]), "utf-8")
    reimport_book(library, book_id)
    lost = library.lost_anchors(book_id)
    assert [(a.kind, a.id) for a in lost] == [("highlight", highlight.id)]

"""What read aloud says: sentences with the app's splitter, note markers left out, alt text
as "Illustration: …", each with its page and offsets; long text in bounded pieces."""

from __future__ import annotations

import itertools
import time

from core.speech import NoText, plan_book
from core.speech.plan import MAX_CHARS, page_utterances

PAGE = (
    "CHAPTER I\n\nMr. Holmes said “Why?” to J. H. Watson. It was March,[5] 1776.\n\n"
    "[Illustration: A cat grinning]\n\n> Quoted line one. And two!\n\n* * *\n\n[5] The note."
)


def test_sentences_notes_illustrations_and_offsets() -> None:
    said = list(page_utterances(3, PAGE))
    assert [u.text for u in said] == [
        "CHAPTER I",
        "Mr. Holmes said “Why?” to J. H. Watson.",
        "It was March, 1776.",
        "Illustration: A cat grinning",
        "Quoted line one.",
        "And two!",
        "The note.",
    ]
    assert {u.page for u in said} == {3}
    assert [u.kind for u in said][3] == "illustration"
    assert PAGE[said[1].start : said[1].end] == said[1].text
    assert PAGE[said[2].start : said[2].end] == "It was March,[5] 1776."
    # a word the engine reports ("1776", at 14 of what is said) is found on the page
    at = said[2].page_offset(said[2].text.index("1776"))
    assert PAGE[at : at + 4] == "1776"


def test_from_an_offset_starts_at_its_sentence() -> None:
    inside = PAGE.index("Watson")
    said = list(page_utterances(1, PAGE, inside))
    assert said[0].text.startswith("Mr. Holmes") and len(said) == 6


def test_plan_runs_on_to_the_next_pages_lazily() -> None:
    asked: list[int] = []

    def text(n: int) -> str:
        asked.append(n)
        return f"Page {n} begins. It ends here."

    utterances = plan_book(text, 50, 2)
    first = [next(utterances) for _ in range(3)]
    assert [(u.page, u.text) for u in first] == [
        (2, "Page 2 begins."),
        (2, "It ends here."),
        (3, "Page 3 begins."),
    ]
    assert asked == [2, 3]


def test_a_pdf_without_text_says_so() -> None:
    try:
        plan_book(lambda n: "  \n", 6, 1, "pdf")
    except NoText as exc:
        assert "no text to read aloud" in str(exc) and "pictures" in str(exc)
    else:
        raise AssertionError("no NoText")


def test_two_megabytes_in_one_paragraph_stay_quick_and_bounded() -> None:
    no_full_stop = ("word " * 20 + ", ") * 20_000  # 2 MB, not a sentence end in it
    sentences = "Some words here and there. " * 80_000
    for text in (no_full_stop, sentences):
        started = time.perf_counter()
        said = page_utterances(1, text)
        first = [next(said) for _ in range(20)]
        assert time.perf_counter() - started < 1.0
        assert all(0 < len(u.text) <= MAX_CHARS for u in first)
        assert all(a.end <= b.start for a, b in itertools.pairwise(first))
    assert first[0].text == "Some words here and there."

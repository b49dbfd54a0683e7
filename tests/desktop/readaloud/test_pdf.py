"""Read aloud on a PDF with a text layer: the sentence said is marked on the page where it
stands (the view left where it is while the sentence is on screen), the word said is
underlined inside it, and reading runs on to the next page, turning to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRectF

from core.speech.plan import page_utterances
from tests.desktop.conftest import open_book_file


@pytest.fixture(autouse=True)
def _test_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MARGIN_SPEECH_ENGINE", "mock")
    yield


def union(polys: list[Any]) -> QRectF:
    box = QRectF()
    for poly in polys:
        box = box.united(poly.boundingRect())
    return box


def test_sentences_and_words_marked_on_a_pdf_page(qtbot: Any, window: Any, pdf_dir: Path) -> None:
    book = open_book_file(window, pdf_dir / "pdflatex-4-pages.pdf")
    pdf = window.reader.host.pdf_view()
    # the page laid out at the window's width and drawn (fitting it scrolls the view)
    qtbot.waitUntil(lambda: pdf.is_drawn() and not pdf._relayout_timer.isActive(), timeout=5000)
    speech = window.read_aloud.rs.speech
    speech.set_rate(1.0)
    seen: list[tuple[str, int, Any, int]] = []  # text said, mark's page, its box, scroll
    speech.utteranceStarted.connect(
        lambda u: seen.append(
            (
                u.text,
                pdf.mark[0] if pdf.mark else -1,
                union(pdf.mark[1]) if pdf.mark else None,
                pdf.verticalScrollBar().value(),
            )
        )
    )
    words: list[tuple[str, Any]] = []
    speech.wordStarted.connect(
        lambda *_: words.append(
            (window.read_aloud.rs.word, union(pdf.word[1]) if pdf.word else None)
        )
    )
    window.read_aloud.rs.toggle()
    qtbot.waitUntil(lambda: len(seen) >= 2 and len(words) >= 12, timeout=10000)
    speech.stop()
    stored = window.library.page(book, 1).text
    planned = list(page_utterances(1, stored))
    assert [t for t, *_ in seen] == [u.text for u in planned[: len(seen)]]
    (_, page_a, box_a, scroll_a), (_, page_b, box_b, scroll_b) = seen[:2]
    assert page_a == page_b == 0 and box_a != box_b  # each sentence marked where it is
    assert scroll_a == scroll_b  # the view stays put while the sentence is on screen
    last_word, word_box = words[-1]
    assert last_word and last_word in seen[-1][0]
    assert word_box is not None and box_b.contains(word_box.center())  # inside its sentence
    assert word_box.width() < box_b.width() / 3  # a word, not the sentence

    seen.clear()
    speech.play(1, planned[-1].start)  # the last sentence of page 1, then page 2
    qtbot.waitUntil(lambda: len(seen) >= 2, timeout=10000)
    speech.stop()
    assert seen[1][1] == 1 and window.reader.page == 2  # marked on page 2, turned to it
    assert pdf.mark_visible()

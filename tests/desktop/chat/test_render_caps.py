"""desktop/chat/render.py: what an answer shows at once (issue 27 item 6)."""

from __future__ import annotations

from core.agent.answer import AnswerState
from desktop.chat.render import SHOWN_CHARS, SHOWN_LINES, answer_html, cut_at, markdown, pieces


def table(rows: int) -> str:
    return "| a | b |\n|---|---|\n" + "".join(f"| r{i} | v{i} |\n" for i in range(rows))


def test_cut_at_keeps_short_text_whole_and_cuts_long_text_at_a_line_end() -> None:
    assert cut_at("short") == 5
    text = table(1000)
    end = cut_at(text)
    assert text[:end].count("\n") < SHOWN_LINES and text[end] == "\n"
    assert cut_at("w" * 50_000) == SHOWN_CHARS


def test_pieces_cover_the_text_and_repeat_a_table_header() -> None:
    text = table(1000)
    parts = pieces(text)
    assert len(parts) > 5
    assert all(p.lstrip("\n").startswith("| a | b |\n|---|---|") for p in parts)
    rows = [line for p in parts for line in p.splitlines() if line.startswith("| r")]
    assert rows == [f"| r{i} | v{i} |" for i in range(1000)]
    assert all(markdown(p).count("<table>") == 1 for p in parts)


def test_a_long_answer_shows_its_beginning_and_a_show_all_link() -> None:
    view = AnswerState(key="9", text="w" * 100_000, status="complete")
    html = answer_html(view)
    assert 'href="margin-action:all/9"' in html and len(html) < SHOWN_CHARS * 2
    assert "margin-action:all" not in answer_html(view, full=True)
    running = AnswerState(key="live-1", text="w" * 100_000, status="running")
    assert "The rest shows when the answer ends" in answer_html(running, body=running.text)


def test_long_words_get_places_to_break() -> None:
    assert "\u200b" in markdown("x" * 500)
    assert "\u200b" not in markdown("a normal sentence with words")

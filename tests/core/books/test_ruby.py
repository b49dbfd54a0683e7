"""Ruby (furigana) is kept out of the searchable text and rides on its base for the reader
(issue 45, item 2). The markup is Aozora Bunko's, from the first paragraph of Natsume
Sōseki's *Kokoro* (public domain)."""

from __future__ import annotations

from core.books.htmlblocks import html_to_blocks
from core.settings import parse_reader_settings

KOKORO = (
    "<html><body><p>　<ruby><rb>私</rb><rp>（</rp><rt>わたくし</rt><rp>）</rp></ruby>"
    "はその人を常に先生と呼んでいた。これは世間を<ruby><rb>憚</rb><rp>（</rp><rt>はば</rt>"
    "<rp>）</rp></ruby>かる遠慮というよりも、その方が私にとって自然だからである。</p>"
    "<p><ruby>漢<rt>かん</rt>字<rt>じ</rt></ruby>と<ruby>芭蕉<rt>ばしょう</rt></ruby></p>"
    "</body></html>"
)


def test_readings_stay_out_of_the_text() -> None:
    _, blocks = html_to_blocks(KOKORO)
    text = "\n".join(b.text for b in blocks)
    assert "私はその人を常に先生と呼んでいた。" in text
    assert "世間を憚かる遠慮" in text
    assert "漢字と芭蕉" in text
    for reading in ("わたくし", "はば", "かん", "ばしょう", "（", "）"):
        assert reading not in text


def test_readings_ride_on_their_base_in_the_page() -> None:
    _, blocks = html_to_blocks(KOKORO)
    page = "".join(b.html for b in blocks)
    assert '<span class="ruby" title="わたくし">私</span>' in page
    assert (
        '<span class="ruby" title="かん">漢</span><span class="ruby" title="じ">字</span>' in page
    )
    assert "（" not in page  # the <rp> parentheses are for readers without ruby


def test_the_reader_chooses_whether_readings_show() -> None:
    assert parse_reader_settings({}, "settings.toml")[0].ruby == "above"
    assert parse_reader_settings({"ruby": "off"}, "settings.toml")[0].ruby == "off"
    assert parse_reader_settings({"ruby": "parentheses"}, "s.toml")[0].ruby == "parentheses"
    settings, problems = parse_reader_settings({"ruby": "inline"}, "settings.toml")
    assert settings.ruby == "above" and problems and "ruby" in problems[0]

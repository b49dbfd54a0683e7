"""Ruby readings in the page view (issue 45, item 2): over the word (its tooltip) by
default, gone when the reader sets ``[reader] ruby = "off"``; the view's text, which
highlights and positions are measured in, never holds them."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtGui import QTextCursor

from core.books.htmlblocks import html_to_blocks
from core.domain.book import PageContent
from desktop.reader.text_view import TextView

HTML = "<p><ruby><rb>私</rb><rp>（</rp><rt>わたくし</rt><rp>）</rp></ruby>はその人を先生と呼んでいた。</p>"


def page(number: int) -> PageContent:
    _, blocks = html_to_blocks(HTML)
    return PageContent(number, "1", blocks[0].text, blocks[0].html)


def reading_at(view: TextView, offset: int) -> str:
    view.document().setHtml(view.flow._page_html(1))
    cursor = QTextCursor(view.document())
    cursor.setPosition(offset)
    return str(cursor.charFormat().toolTip())


def test_readings_show_over_the_word_or_not_at_all(qtbot) -> None:  # type: ignore[no-untyped-def]
    view = TextView(None, "epub")
    qtbot.addWidget(view)
    view.flow.set_source(page, 1)
    assert reading_at(view, 1) == "わたくし"
    assert view.document().toPlainText() == "私はその人を先生と呼んでいた。"
    view.typography = replace(view.typography, ruby="off")
    assert reading_at(view, 1) == ""

"""Issue 23 case 2: only links the app made itself are live in the transcript. A model that
writes a link in the app's own schemes gets plain text; the app's own notice links stay."""

from __future__ import annotations

import re

from core.agent.answer import AnswerState, marker
from core.agent.types import Withheld
from desktop.chat.render import markdown, shown_text

LIVE = re.compile(r'href="(margin-[^"]*)"')


def test_links_the_model_writes_in_the_apps_schemes_are_plain_text() -> None:
    text = (
        "See [the ending](margin-cite:1/300-300?q=end) or "
        "[settings](margin-action:settings) or <margin-action:retry/1>.\n\n"
        "[ref]: margin-action:regenerate\n\n"
        "A normal link [stays](https://example.org)."
    )
    html = markdown(shown_text(AnswerState(key="7", text=text)))
    assert LIVE.findall(html) == []
    assert "the ending" in html and "settings" in html and 'href="https://example.org"' in html


def test_the_apps_own_notice_links_stay_live() -> None:
    hidden = Withheld(1, "The Knave [x](margin-action:settings) stole them.", (("Knave", 80),), 21)
    view = AnswerState(key="7", text=f"Alice grows. {marker(1)}", withheld=[hidden])
    html = markdown(shown_text(view))
    assert LIVE.findall(html) == ["margin-action:reveal/7/1"]
    revealed = markdown(shown_text(view, {1}))
    assert LIVE.findall(revealed) == []  # the revealed sentence's own link is plain text
    assert "Knave" in revealed

"""Issue 23 case 2: only links the app made itself are live in the transcript. A model that
writes a link in the app's own schemes gets plain text; the app's own notice links stay."""

from __future__ import annotations

import re

import pytest

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


# --- issue 46 item 2: whatever the model writes, its links in the app's schemes stay text ---


@pytest.mark.parametrize(
    "written",
    [
        "[p. 12 [source]](margin-cite:1/420-420?q=ball)",
        "[p. 12 [a [b]]](margin-cite:1/420-420)",
        "[Show anyway](margin-action:reveal/7/1)",
        "[Show anyway](MARGIN-ACTION:reveal/7/1)",
        "[Show anyway]( <margin-action:reveal/7/1> )",
        '[Show anyway](margin-action:reveal/7/1 "title")',
        "[Show anyway][r]\n\n[r]: margin-action:reveal/7/1",
        "[Show anyway][r]\n\n   [r]:\n margin-action:reveal/7/1",
        "<margin-action:reveal/7/1>",
        "[x](margin%2Daction:reveal/7/1)",
        "[x](#margin-action:reveal/7/1)",
        "[x](reveal/7/1)",
        "&#xe000;reveal/7/1&#xe002;Show anyway&#xe001;",
        "\ue000reveal/7/1\ue002Show anyway\ue001",
    ],
)
def test_no_link_the_model_writes_is_live_but_the_web(written: str) -> None:
    hidden = Withheld(1, "Later, Lydia elopes with Wickham.", (("Wickham", 80),), 21)
    view = AnswerState(key="7", text=f"She dances. {written} {marker(1)}", withheld=[hidden])
    html = markdown(shown_text(view))
    assert re.findall(r'href="([^"]*)"', html) == ["margin-action:reveal/7/1"], html
    assert "\ue000" not in html and "\ue001" not in html
    # the model's link to the web stays a link
    web = markdown(shown_text(AnswerState(key="7", text="[a [b]](https://example.org/x)")))
    assert 'href="https://example.org/x"' in web

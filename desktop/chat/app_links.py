"""Only links the app made itself are live in the chat (issue 46 item 2).

A model's Markdown may hold any link text: brackets inside brackets, reference links, upper
case schemes, entities. Rather than filter what it writes, the rendered HTML keeps a link only
when it goes to the web (http, https, mailto); the app's own links (a notice's Show anyway)
are written into the Markdown as tokens (``app_link``) of private-use characters with a secret
of this process, and become links only after rendering (``only_app_links``).
"""

from __future__ import annotations

import html
import re
import secrets

# The app's own links inside Markdown: a token of private-use characters (taken out of any
# text a model writes, ``model_text``) and a secret of this process (a model writing the
# characters as entities cannot know it) that only ``markdown`` turns into a link.
_OPEN, _CLOSE, _SEP = "\ue000", "\ue001", "\ue002"
_NONCE = secrets.token_hex(8)
_APP_TOKEN = re.compile(
    f"{_OPEN}{_NONCE}([a-z]+/[\\w/-]+){_SEP}([^{_OPEN}{_CLOSE}{_SEP}]*){_CLOSE}"
)
_HTML_LINK = re.compile(r"<a\s[^>]*?href=\"([^\"]*)\"[^>]*>(.*?)</a>", re.S)
_WEB = re.compile(r"(?:https?|mailto):", re.I)


def app_link(action: str, label: str) -> str:
    """A link of the app's own (``margin-action:ACTION``) inside Markdown given to
    ``markdown``: the only way one becomes live."""
    return f"{_OPEN}{_NONCE}{action}{_SEP}{label}{_CLOSE}"


def model_text(text: str) -> str:
    """Text a model wrote, safe to put into Markdown beside the app's links: it can hold no
    app link token."""
    if _OPEN in text or _CLOSE in text or _SEP in text:
        return text.replace(_OPEN, "").replace(_CLOSE, "").replace(_SEP, "")
    return text


def _web_only(match: re.Match[str]) -> str:
    href = html.unescape(match.group(1)).strip()
    return match.group(0) if _WEB.match(href) else match.group(2)


def _app_anchor(match: re.Match[str]) -> str:
    return f'<a href="margin-action:{match.group(1)}">{match.group(2)}</a>'


def only_app_links(rendered: str) -> str:
    """Rendered HTML with every link but a web link made text, and the app's tokens made
    into its links."""
    rendered = _HTML_LINK.sub(_web_only, rendered)
    rendered = _APP_TOKEN.sub(_app_anchor, rendered)
    return rendered.replace(_OPEN, "").replace(_CLOSE, "").replace(_SEP, "")

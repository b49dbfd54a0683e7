"""Page chips in a no-model reply: passages mode (``core.agent.providers.passages``) writes
a line of pages and chapter above each passage ("pp. 46–48 · CHAPTER VII. …"); the chat
draws its pages as the chip of that passage's citation, which opens the page with the
passage's best sentence marked, as the chips under the reply do."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection

from core.agent.types import CitationRef
from core.labels import pages_label

# the pages line as markdown-it draws it: "<p>pp. 46–48 (p. 40 in print) · Chapter</p>"
_PAGES_LINE = re.compile(r"<p>(pp?\. [\w–-]+)(?: \([^)<]*\))?(?= ·|</p>)")


def passage_chips(
    body: str, citations: Collection[CitationRef], chip: Callable[[CitationRef], str]
) -> str:
    """``body`` (a no-model reply's HTML) with each passage's pages line starting with the
    ``chip`` of the citation for those pages (the line is left as it is when none is)."""
    by_label: dict[str, CitationRef] = {}
    for c in citations:
        by_label.setdefault(pages_label(c.first_page, c.last_page), c)

    def replace(match: re.Match[str]) -> str:
        c = by_label.get(html.unescape(match.group(1)))
        return f"<p>{chip(c)}" if c is not None else match.group(0)

    return _PAGES_LINE.sub(replace, body)

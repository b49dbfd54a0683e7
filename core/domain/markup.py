"""Text made HTML: ``escape_text`` is ``html.escape(text, quote=False)``, which the text
parser, the pages and the stored pages use on every paragraph, without loading ``html``
(its entity tables: 1.2 ms of importing a text book, issue 41)."""

from __future__ import annotations


def escape_text(text: str) -> str:
    """``&``, ``<`` and ``>`` as HTML character references; quotes left as they are."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

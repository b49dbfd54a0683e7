"""How a highlight looks besides its colour: a background ("highlight"), an underline or a
line through the words ("strike"), as calibre offers. Kept apart from the library's other
highlight calls: ``Library.add_highlight`` saves a plain highlight and ``set_style`` then
changes its look."""

from __future__ import annotations

from core.errors import BookCode, BookError
from core.store import models as m

HIGHLIGHT_STYLES = ("highlight", "underline", "strike")
STYLE_NAMES = {"highlight": "Highlight", "underline": "Underline", "strike": "Strike through"}


def set_style(highlight_id: int, style: str) -> None:
    """Draw highlight ``highlight_id`` as ``style`` from now on."""
    if style not in HIGHLIGHT_STYLES:
        raise BookError(
            "bad_style",
            f'"{style}" is not a highlight style; use one of {", ".join(HIGHLIGHT_STYLES)}.',
        )
    done = (
        m.Highlight.update(style=style, updated_at=m.utcnow())
        .where(m.Highlight.id == highlight_id)
        .execute()
    )
    if not done:
        raise BookError(BookCode.NOT_FOUND, f"There is no highlight number {highlight_id}.")

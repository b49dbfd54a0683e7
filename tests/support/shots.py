"""Screenshots from window tests, saved only when asked for.

A test never writes outside its own temp folder by default: screenshots go to the folder named
by ``MARGIN_SHOTS`` (made if missing) and nowhere when it is unset. Usage::

    save_shot(window.grab(), "reply-light.png")  # a no-op without MARGIN_SHOTS
    if shots_wanted():  # skip the theme round trip that only feeds the screenshots
        ...
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

ENV = "MARGIN_SHOTS"


class Picture(Protocol):
    """A QImage or QPixmap (anything with Qt's ``save(path)``)."""

    def save(self, path: str) -> bool: ...


def shots_folder() -> Path | None:
    """The folder MARGIN_SHOTS names (created), else None."""
    named = os.environ.get(ENV)
    if not named:
        return None
    folder = Path(named)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shots_wanted() -> bool:
    return bool(os.environ.get(ENV))


def save_shot(picture: Picture, name: str) -> Path | None:
    """Save ``picture`` as ``name`` under MARGIN_SHOTS; nothing without it. Returns the file."""
    folder = shots_folder()
    if folder is None:
        return None
    path = folder / name
    if not picture.save(str(path)):
        raise AssertionError(f"the screenshot {path} could not be written")
    return path


def keep_shot(path: Path) -> Path | None:
    """Copy a screenshot a child process wrote in the test's temp folder to MARGIN_SHOTS."""
    folder = shots_folder()
    if folder is None:
        return None
    kept = folder / path.name
    kept.write_bytes(path.read_bytes())
    return kept

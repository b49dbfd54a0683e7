"""Versions for bug reports (``margin --version``, About)."""

from __future__ import annotations

import sys


def version_text() -> str:
    """Versions for bug reports. Inside the bundled app there is no package metadata, so the
    modules' own version attributes are the fallback."""
    from importlib import metadata

    def ver(dist: str, module: str, attribute: str = "__version__") -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
        try:
            value = getattr(__import__(module, fromlist=["_"]), attribute)
            return str(value() if callable(value) else value)
        except Exception:
            return "unknown"

    from core import __version__

    margin = __version__
    return (
        f"Margin {margin}\n"
        f"Python {sys.version.split()[0]}\n"
        f"Qt (PySide6) {ver('PySide6-Essentials', 'PySide6')}\n"
        f"anthropic SDK {ver('anthropic', 'anthropic')}\n"
        f"pypdfium2 {ver('pypdfium2', 'pypdfium2.version', 'PYPDFIUM_INFO')}, peewee {ver('peewee', 'peewee')}"
    )

"""Where the app's own files are (icons, the welcome guide): beside the package, or inside
the PyInstaller bundle. Imported by the entry point and the window alike."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(getattr(sys, "_MEIPASS", Path(__file__).resolve().parent.parent))


def resources_dir() -> Path:
    return ROOT / "resources"

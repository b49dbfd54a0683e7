"""Prompt templates live in ``prompts/*.md`` and are loaded by name at run time.

Placeholders are written ``{name}``; only the names passed in are replaced, so braces that are
part of the text (JSON examples, code) stay as they are.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from pathlib import Path

from core.errors import SettingsError

_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


def prompts_dir() -> Path:
    """The folder holding the prompt files: ``MARGIN_PROMPTS`` when set, the bundle's copy when
    frozen by PyInstaller, else ``prompts/`` at the project root."""
    override = os.environ.get("MARGIN_PROMPTS")
    if override:
        return Path(override)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "prompts"
    return Path(__file__).resolve().parent.parent / "prompts"


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def load_prompt(name: str, /, *, folder: Path | None = None, **values: str) -> str:
    """Read ``prompts/<name>.md`` and fill in ``{placeholders}`` from ``values``.

    A missing file is a ``SettingsError`` that names the file: the app cannot work without its
    prompts and the reader should reinstall rather than get an empty prompt.
    """
    base = folder or prompts_dir()
    path = base / f"{name}.md"
    try:
        text = _read(path)
    except FileNotFoundError:
        raise SettingsError(
            "missing_prompt",
            f"The prompt file {path} is missing.",
            hint="Reinstall Margin, or point MARGIN_PROMPTS at a folder with the prompt files.",
        ) from None
    except OSError as exc:
        raise SettingsError(
            "unreadable_prompt",
            f"The prompt file {path} could not be read ({exc.strerror or exc}).",
            hint="Check the file's permissions.",
        ) from None

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        return values[key] if key in values else match.group(0)

    return _PLACEHOLDER.sub(fill, text).strip() + "\n"

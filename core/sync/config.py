"""The tables of ``settings.toml`` that sync and outside sources keep: ``[kosync]``,
``[webdav]``, ``[calibre]`` (libraries) and ``[opds]`` (catalogues). Each is read and
written on its own; the rest of the file is kept as it was. Passwords are never here."""

from __future__ import annotations

import os
import tomllib
import uuid
from typing import Any

from core.paths import Paths


def _read(paths: Paths) -> dict[str, Any]:
    try:
        return tomllib.loads(paths.settings_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        from core.settings import load_settings

        load_settings(paths)  # raises the settings' own clear error
        return {}


def table(paths: Paths, name: str) -> dict[str, Any]:
    """The table ``name`` (empty when absent or not a table)."""
    value = _read(paths).get(name)
    return dict(value) if isinstance(value, dict) else {}


def save_table(paths: Paths, name: str, values: dict[str, Any]) -> None:
    """Replace the table ``name``, keeping everything else in the file."""
    import tomli_w

    raw = _read(paths)
    raw[name] = {k: v for k, v in values.items() if v is not None}
    path = paths.settings_file
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".sync.tmp")
    tmp.write_text(tomli_w.dumps(raw), encoding="utf-8")
    os.replace(tmp, path)


def device_id(paths: Paths) -> str:
    """This data folder's own id, made once and kept in the data folder (not the settings:
    copying the settings to another computer must not copy the identity)."""
    path = paths.data / "device-id"
    try:
        text = path.read_text(encoding="ascii").strip()
        if text:
            return text
    except (OSError, UnicodeDecodeError):
        pass
    made = uuid.uuid4().hex
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(made, encoding="ascii")
    return made

"""Read aloud's settings: the ``[read_aloud]`` table of settings.toml (their one home).

The voice (by its name, with its language: a voice is used only for books in its language),
the speed, and whether answers are read aloud as they finish. Each key is checked on its own:
a bad one is reported and falls back to its default, the others still apply. Loading never
raises; saving keeps everything else in the file as it was."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass
from typing import Any

from core.paths import Paths

TABLE = "read_aloud"


@dataclass(frozen=True)
class ReadAloudSettings:
    voice: str = ""  # the voice's name; "" = the first voice for the book's language
    voice_language: str = ""  # the voice's language (BCP 47, "en-GB"): used for books in it
    rate: float = 0.0  # speed from -1 (slowest) to 1 (fastest); 0 is the voice's own
    answers_aloud: bool = False  # read each answer aloud when it finishes


_RULES: dict[str, tuple[type, str]] = {
    "voice": (str, "a voice's name (or \"\" for the language's first voice)"),
    "voice_language": (str, 'a language tag such as "en-GB" (or "")'),
    "rate": (float, "a number from -1.0 (slowest) to 1.0 (fastest)"),
    "answers_aloud": (bool, "true or false"),
}


def _problem(key: str, value: Any) -> str | None:
    rule = _RULES.get(key)
    if rule is None:
        return "one of " + ", ".join(_RULES)
    kind, what = rule
    if kind is bool:
        return None if isinstance(value, bool) else what
    if kind is str:
        return None if isinstance(value, str) and len(value) <= 200 else what
    if isinstance(value, bool) or not isinstance(value, int | float):
        return what
    return None if -1.0 <= value <= 1.0 else what


def parse(raw: Any, where: str) -> tuple[ReadAloudSettings, list[str]]:
    """``raw`` (the table) checked key by key: the settings and one sentence per problem."""
    if raw is None:
        return ReadAloudSettings(), []
    if not isinstance(raw, dict):
        return ReadAloudSettings(), [
            f"The [{TABLE}] section in {where} is not a table of settings; reading aloud "
            "uses its defaults. Fix or delete it."
        ]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        problem = _problem(key, value)
        if problem is None:
            values[key] = _RULES[key][0](value)
            continue
        problems.append(
            f"The setting '{TABLE}.{key}' in {where} is not valid: it should be {problem}. "
            "Margin uses the default until you fix or delete that line."
        )
    return ReadAloudSettings(**values), problems


def load(paths: Paths) -> tuple[ReadAloudSettings, list[str]]:
    """The ``[read_aloud]`` table (the defaults when there is none), and its problems."""
    path = paths.settings_file
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ReadAloudSettings(), []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ReadAloudSettings(), [
            f"Margin cannot read the read-aloud settings in {path} ({exc}); it uses the "
            "defaults. Fix the file, or delete it to go back to the defaults."
        ]
    return parse(raw.get(TABLE), str(path))


def save(paths: Paths, settings: ReadAloudSettings) -> bool:
    """Write the ``[read_aloud]`` table, keeping the rest of settings.toml; False (nothing
    written) when the file is there but cannot be read, so it is never overwritten."""
    import tomli_w

    path = paths.settings_file
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    raw[TABLE] = dataclasses.asdict(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".read_aloud.tmp")
    tmp.write_text(tomli_w.dumps(raw), encoding="utf-8")
    os.replace(tmp, path)
    return True

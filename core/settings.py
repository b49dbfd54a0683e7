"""Settings (a TOML file in the config folder) and the API key (never in that file).

The key comes from ``ANTHROPIC_API_KEY``, else the system keyring (service "Margin"), else a
key kept in memory for this session only, used when no keyring backend works on this system.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import SettingsError
from core.paths import Paths

log = logging.getLogger("margin.settings")

PROVIDERS = ("auto", "anthropic", "local", "passages")
# "auto": chosen for the model (``core.agent.probe``); the others as named
STRATEGIES = ("auto", "tool-use", "always-retrieve", "llm-only")
DEFAULT_MODEL = "claude-sonnet-4-6"  # 4-5 reaches end-of-life on 2026-11-30
LOCAL_DEFAULT_URL = "http://localhost:11434"
LOCAL_READING = ("speed", "breadth")


@dataclass(frozen=True)
class AgentLimits:
    max_turns: int = 8
    max_tool_calls: int = 16
    deadline_s: float = 180.0
    stream_idle_s: float = 60.0
    max_history_messages: int = 40
    history_token_budget: int = 60_000
    max_output_tokens: int = 4096
    # a local model's answer: about 40 s at 27 tokens/s on a small CPU, a page of text
    local_max_output_tokens: int = 1024
    # a local model reads its prompt before the first word (about 33 tokens/s on two cores):
    # its run, and its wait for the first event, may last this long
    local_deadline_s: float = 600.0


@dataclass(frozen=True)
class Settings:
    provider: str = "auto"  # anthropic | local | passages | auto (anthropic with a key)
    base_url: str = ""  # "" = Claude's own API
    model: str = DEFAULT_MODEL
    strategy: str = "auto"
    spoiler_safe: bool = True
    limits: AgentLimits = field(default_factory=AgentLimits)
    budget_per_book_usd: float = 0.0  # 0 = no budget; the chat pane warns before going past it
    # with a model, a short call verifies doubtful sentences: "auto" with Claude only (small
    # local models answer UNSUPPORTED to nearly everything, tests/bench/real_model/RESULTS.md),
    # true with every model, false never
    spoiler_verify: bool | str = "auto"
    # what a local model reads of the passages found: "speed" (the best sentences, a short
    # prompt: the first word sooner) or "breadth" (more of each passage)
    local_reading: str = "speed"
    previously_after_days: int = (
        3  # "Previously…" when a book is opened after this many days (0: never)
    )

    def verifies_with(self, provider: str) -> bool:
        """Whether doubtful sentences are verified by a call to ``provider`` ("anthropic",
        "local", "passages")."""
        if provider == "passages":
            return False
        return self.spoiler_verify is True or (
            self.spoiler_verify == "auto" and provider == "anthropic"
        )

    def effective_provider(self, has_key: bool) -> str:
        """The provider a question will really use."""
        if self.provider == "auto":
            return "anthropic" if has_key else "passages"
        if self.provider == "anthropic" and not has_key:
            return "passages"
        return self.provider

    def effective_base_url(self) -> str:
        if self.base_url:
            return self.base_url
        if self.provider == "local":
            return LOCAL_DEFAULT_URL
        return os.environ.get("ANTHROPIC_BASE_URL", "")


def _check(path: Path, key: str, ok: bool, expected: str) -> None:
    if not ok:
        raise SettingsError(
            "bad_setting",
            f"The setting '{key}' in {path} is not valid: it should be {expected}.",
            hint="Fix or delete that line (Margin then uses its default).",
        )


def _limits(path: Path, raw: Any) -> AgentLimits:
    if raw is None:
        return AgentLimits()
    _check(path, "limits", isinstance(raw, dict), "a table of numbers")
    values: dict[str, Any] = {}
    defaults = AgentLimits()
    for f in dataclasses.fields(AgentLimits):
        if f.name not in raw:
            continue
        value = raw[f.name]
        default = getattr(defaults, f.name)
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        _check(path, f"limits.{f.name}", numeric and value > 0, "a positive number")
        values[f.name] = type(default)(value)
    unknown = set(raw) - {f.name for f in dataclasses.fields(AgentLimits)}
    _check(
        path,
        f"limits.{next(iter(unknown), '')}",
        not unknown,
        "one of " + ", ".join(f.name for f in dataclasses.fields(AgentLimits)),
    )
    return AgentLimits(**values)


def load_settings(paths: Paths) -> Settings:
    """Settings from the TOML file; a missing file means the defaults."""
    path = paths.settings_file
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            "unreadable_settings", f"Margin cannot read its settings file {path} ({exc})."
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(
            "bad_settings",
            f"The settings file {path} is not valid TOML ({exc}).",
            hint="Fix the file, or delete it to go back to the defaults.",
        ) from None
    except (RecursionError, MemoryError):
        # a value nested thousands deep ("[[[[…"): Python's TOML reader gives up (issue 46)
        raise SettingsError(
            "bad_settings",
            f"The settings file {path} nests its values too deeply to be read.",
            hint="Fix the file, or delete it to go back to the defaults.",
        ) from None
    provider = raw.get("provider", "auto")
    _check(path, "provider", provider in PROVIDERS, "one of " + ", ".join(PROVIDERS))
    strategy = raw.get("strategy", "auto")
    _check(path, "strategy", strategy in STRATEGIES, "one of " + ", ".join(STRATEGIES))
    base_url = raw.get("base_url", "")
    _check(
        path,
        "base_url",
        isinstance(base_url, str)
        and (not base_url or base_url.startswith(("http://", "https://"))),
        "an http:// or https:// address",
    )
    model = raw.get("model", DEFAULT_MODEL)
    _check(path, "model", isinstance(model, str) and bool(model.strip()), "a model name")
    spoiler = raw.get("spoiler_safe", True)
    _check(path, "spoiler_safe", isinstance(spoiler, bool), "true or false")
    verify = raw.get("spoiler_verify", "auto")
    _check(
        path,
        "spoiler_verify",
        isinstance(verify, bool) or verify == "auto",
        'true, false or "auto" (with Claude only)',
    )
    budget = raw.get("budget_per_book_usd", 0.0)
    _check(
        path,
        "budget_per_book_usd",
        isinstance(budget, int | float) and not isinstance(budget, bool) and budget >= 0,
        "an amount in US dollars, 0 or more (0 means no budget)",
    )
    previously = raw.get("previously_after_days", 3)
    _check(
        path,
        "previously_after_days",
        isinstance(previously, int) and not isinstance(previously, bool) and previously >= 0,
        "a whole number of days, 0 or more (0 means never)",
    )
    reading = raw.get("local_reading", "speed")
    _check(path, "local_reading", reading in LOCAL_READING, '"speed" or "breadth"')
    known = {
        "local_reading",
        "previously_after_days",
        "provider",
        "strategy",
        "base_url",
        "model",
        "spoiler_safe",
        "spoiler_verify",
        "limits",
        "budget_per_book_usd",
        *KEPT_TABLES,  # [reader], and the sync and sources tables (core.sync.config)
    }
    for key in raw:
        _check(
            path,
            key,
            key in known,
            "a known setting (provider, base_url, model, strategy, spoiler_safe, "
            "spoiler_verify, limits, budget_per_book_usd, local_reading, previously_after_days, "
            "reader, kosync, webdav, calibre, opds)",
        )
    return Settings(
        provider,
        base_url.rstrip("/"),
        model.strip(),
        strategy,
        spoiler,
        _limits(path, raw.get("limits")),
        float(budget),
        verify,
        reading,
        int(previously),
    )


def save_settings(paths: Paths, settings: Settings) -> None:
    """Write the settings atomically. The API key is never part of them."""
    import tomli_w

    data = dataclasses.asdict(settings)
    path = paths.settings_file
    raw = _read_raw(path)
    for table in KEPT_TABLES:  # tables saved on their own ([reader], core.sync.config's)
        kept = raw.get(table)
        if isinstance(kept, dict | list):
            data[table] = kept
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


# The reader's look: the [reader] table --------------------------------------------------

READER_TABLE = "reader"
# tables other modules save on their own, kept when the settings are saved
KEPT_TABLES = (READER_TABLE, "kosync", "webdav", "calibre", "opds", "read_aloud")


@dataclass(frozen=True)
class ReaderSettings:
    """How reflowable books look (``[reader]`` in settings.toml). Each key is checked on its
    own: a bad one is reported and falls back to its default, the others still apply."""

    font_family: str = ""  # "" = a serif font the app picks
    font_size: int = 12  # points (16 px, as calibre and browsers)
    line_spacing: float = 1.25  # times the font's height
    paragraph_spacing: float = 0.6  # em between paragraphs
    paragraph_indent: float = 0.0  # em at the start of each paragraph
    measure: int = 66  # characters per line, at most
    margin: int = 24  # pixels on each side of the column, at least
    justify: bool = False
    book_styles: bool = True  # the book's own CSS: indents, alignment, small caps, breaks
    layout: str = "paged"  # "paged" (screen-sized pages) or "scroll" (one continuous flow)
    columns: int = 0  # columns of a paged screen: 0 = by width (two from 860 px), 1 or 2
    caret_browsing: bool = False  # a caret moved by the arrow keys (F7)
    # ruby (furigana) readings: "above" their word (and its tooltip), after it in
    # "parentheses", or "off" (hidden)
    ruby: str = "above"


# (kind, low, high, what people read)
_READER_RULES: dict[str, tuple[type, float, float, str]] = {
    "font_family": (str, 0, 200, 'a font name (or "" for the default serif)'),
    "font_size": (int, 6, 48, "a whole number of points from 6 to 48"),
    "line_spacing": (float, 1.0, 3.0, "a number from 1.0 to 3.0 (times the font's height)"),
    "paragraph_spacing": (float, 0.0, 3.0, "a number of em from 0 to 3"),
    "paragraph_indent": (float, 0.0, 5.0, "a number of em from 0 to 5"),
    "measure": (int, 30, 200, "a whole number of characters per line from 30 to 200"),
    "margin": (int, 0, 400, "a whole number of pixels from 0 to 400"),
    "justify": (bool, 0, 0, "true or false"),
    "book_styles": (bool, 0, 0, "true or false"),
    "layout": (str, 0, 10, '"paged" or "scroll"'),
    "columns": (int, 0, 2, "0 (by the window's width), 1 or 2"),
    "caret_browsing": (bool, 0, 0, "true or false"),
    "ruby": (str, 0, 12, '"above", "parentheses" or "off"'),
}
_READER_CHOICES = {"layout": ("paged", "scroll"), "ruby": ("above", "parentheses", "off")}


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def reader_value_problem(key: str, value: Any) -> str | None:
    """Why ``value`` cannot be ``[reader] key`` ("it should be …"), or None when it is good."""
    rule = _READER_RULES.get(key)
    if rule is None:
        return "one of " + ", ".join(_READER_RULES)
    kind, low, high, what = rule
    if kind is bool:
        return None if isinstance(value, bool) else what
    if kind is str:
        if key in _READER_CHOICES:
            return None if value in _READER_CHOICES[key] else what
        return None if isinstance(value, str) and len(value) <= high else what
    if isinstance(value, bool) or not isinstance(value, int | float):
        return what
    if kind is int and not float(value).is_integer():
        return what
    return None if low <= value <= high else what


def parse_reader_settings(raw: Any, where: str) -> tuple[ReaderSettings, list[str]]:
    """``raw`` (the [reader] table) checked key by key: the settings, with the default in
    place of each bad value, and one sentence per problem for people."""
    defaults = ReaderSettings()
    if raw is None:
        return defaults, []
    if not isinstance(raw, dict):
        return defaults, [
            f"The [reader] section in {where} is not a table of settings; "
            "Margin uses the default look. Fix or delete it."
        ]
    values: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in raw.items():
        problem = reader_value_problem(key, value)
        if problem is None:
            kind = _READER_RULES[key][0]
            values[key] = value.strip() if kind is str else kind(value)
            continue
        default = getattr(defaults, key, None)
        fallback = (
            f"Margin uses the default ({json_value(default)})"
            if key in _READER_RULES
            else "Margin ignores it"
        )
        problems.append(
            f"The setting 'reader.{key}' in {where} is not valid: it should be {problem}. "
            f"{fallback} until you fix or delete that line."
        )
    return ReaderSettings(**values), problems


def json_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def load_reader_settings(paths: Paths) -> tuple[ReaderSettings, list[str]]:
    """The [reader] table of settings.toml. Never raises: a missing file means the defaults,
    an unreadable one the defaults and a sentence saying why."""
    path = paths.settings_file
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ReaderSettings(), []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ReaderSettings(), [
            f"Margin cannot read the reading settings in {path} ({exc}); it uses the default "
            "look. Fix the file, or delete it to go back to the defaults."
        ]
    return parse_reader_settings(raw.get(READER_TABLE), str(path))


def save_reader_settings(paths: Paths, reader: ReaderSettings) -> None:
    """Write the [reader] table and keep everything else in settings.toml as it is."""
    import tomli_w

    path = paths.settings_file
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raw = {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(
            "bad_settings",
            f"The reading settings were not saved: {path} cannot be read ({exc}).",
            hint="Fix the file, or delete it to go back to the defaults.",
        ) from None
    raw[READER_TABLE] = dataclasses.asdict(reader)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(tomli_w.dumps(raw), encoding="utf-8")
    os.replace(tmp, path)

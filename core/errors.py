"""One small hierarchy of errors that explain themselves to people.

Every error carries a machine-readable ``code`` and a ``message`` written for the reader:
what happened and what to do. Tracebacks belong in the log file, never in the message.
"""

from __future__ import annotations

from enum import StrEnum


class MarginError(Exception):
    """Base of every error Margin shows to a person."""

    def __init__(self, code: str, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class BookCode(StrEnum):
    NOT_FOUND = "not_found"
    AMBIGUOUS = "ambiguous"
    UNSUPPORTED = "unsupported"
    UNREADABLE = "unreadable"
    EMPTY = "empty"
    CORRUPT = "corrupt"
    DRM = "drm"
    PASSWORD = "password"
    WRONG_PASSWORD = "wrong_password"
    NO_TEXT = "no_text"
    TOO_LARGE = "too_large"
    CANCELLED = "cancelled"
    BAD_PAGE = "bad_page"


class BookError(MarginError):
    """A book (or a reference to one) cannot be used: the message names the file and why."""

    def __init__(self, code: BookCode | str, message: str, *, hint: str = "") -> None:
        super().__init__(str(code), message, hint=hint)


class LLMCode(StrEnum):
    BAD_KEY = "bad_key"
    PERMISSION = "permission"
    MODEL_NOT_FOUND = "model_not_found"
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    UNREACHABLE = "unreachable"
    TIMEOUT = "timeout"
    CONTEXT_TOO_LONG = "context_too_long"
    BAD_RESPONSE = "bad_response"
    UNEXPECTED = "unexpected"


class LLMError(MarginError):
    """The model server failed; ``retry_after`` is seconds to wait when the server said so."""

    def __init__(
        self,
        code: LLMCode | str,
        message: str,
        *,
        hint: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(str(code), message, hint=hint)
        self.retry_after = retry_after


class StorageError(MarginError):
    """The library database or data folder cannot be used."""


class SettingsError(MarginError):
    """The settings file or a setting's value is wrong."""

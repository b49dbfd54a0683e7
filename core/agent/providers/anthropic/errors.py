"""SDK exceptions → ``LLMError``\\ s that explain themselves, from one table.

``where`` names the actual server ("Claude's API", "the local server at http://…"). Text a
server sent back is shortened and has the configured key removed before it goes anywhere
(a server may echo the key in an error body).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.errors import LLMCode, LLMError


def redact(text: str, secret: str | None) -> str:
    """``text`` with the configured key (whatever its form) removed."""
    if secret and len(secret) >= 6:
        text = text.replace(secret, "[redacted]")
    return text


def retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is None or seconds >= 0 else None


def error_type(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return str(err.get("type", ""))
        return str(body.get("type", ""))
    return ""


def _wait_text(wait: float | None) -> str:
    if not wait:
        return " Try again in a minute."
    if wait < 90:
        return f" Try again in {wait:.0f} seconds."
    return f" Try again in about {wait / 60:.0f} minutes."


@dataclass(frozen=True)
class Rule:
    """One row of the table: which exceptions, and the error for people."""

    sdk_class: str
    make: Callable[[Any, str, str], LLMError]  # (exception, where, server text) → error


def _too_long_or_bad(exc: Any, where: str, text: str) -> LLMError:
    lowered = text.lower()
    if (
        "too long" in lowered
        or ("context" in lowered and "window" in lowered)
        or "too many tokens" in lowered
    ):
        return LLMError(
            LLMCode.CONTEXT_TOO_LONG,
            "This conversation has become too long for the model.",
            hint="Start a new conversation.",
        )
    return LLMError(
        LLMCode.BAD_RESPONSE,
        f"{where} rejected the request ({text[:200]}).",
        hint="Try again; if it persists, report it with the log file.",
    )


def _status(exc: Any, where: str, text: str) -> LLMError:
    status = getattr(exc, "status_code", 0) or 0
    etype = error_type(exc)
    if etype == "overloaded_error" or status == 529:
        return LLMError(
            LLMCode.OVERLOADED,
            f"{where} is overloaded right now.",
            hint="Wait a moment and press Retry.",
        )
    if etype == "rate_limit_error":
        return _rate_limited(exc, where, text)
    if status >= 500 or etype == "api_error":
        return LLMError(
            LLMCode.UNEXPECTED, f"{where} had an internal error.", hint="Try again in a moment."
        )
    return LLMError(
        LLMCode.BAD_RESPONSE,
        f"{where} answered with an error ({status} {etype or text[:120]}).",
        hint="Try again; if it persists, report it with the log file.",
    )


def _rate_limited(exc: Any, where: str, text: str) -> LLMError:
    wait = retry_after(exc)
    return LLMError(
        LLMCode.RATE_LIMITED,
        f"{where} is limiting how fast you can ask.{_wait_text(wait)}",
        hint="Wait a little, then press Retry.",
        retry_after=wait,
    )


def _simple(code: LLMCode, message: str, hint: str) -> Callable[[Any, str, str], LLMError]:
    """A rule whose sentence only names the server (``{where}``)."""
    return lambda exc, where, text: LLMError(code, message.format(where=where), hint=hint)


def _unreachable(exc: Any, where: str, text: str) -> LLMError:
    hint = (
        "Check that the local server is running and the address in Settings is right."
        if "local" in where
        else "Check your internet connection."
    )
    return LLMError(LLMCode.UNREACHABLE, f"Margin cannot reach {where}.", hint=hint)


AGAIN = "Try again; if it keeps happening, check your connection or the server."

# Order matters: subclasses before their bases (the SDK's classes derive from each other).
RULES: tuple[Rule, ...] = (
    Rule(
        "AuthenticationError",
        _simple(
            LLMCode.BAD_KEY,
            "{where} did not accept the API key.",
            "Check the key in Settings (it starts with sk-ant-).",
        ),
    ),
    Rule(
        "PermissionDeniedError",
        _simple(
            LLMCode.PERMISSION,
            "{where} says this key may not use that model or feature.",
            "Check your plan and the model in Settings.",
        ),
    ),
    Rule(
        "NotFoundError",
        _simple(
            LLMCode.MODEL_NOT_FOUND,
            "{where} does not know the model you chose.",
            "Pick another model in Settings.",
        ),
    ),
    Rule("RateLimitError", _rate_limited),
    Rule("APITimeoutError", _simple(LLMCode.TIMEOUT, "{where} took too long to answer.", AGAIN)),
    Rule("APIConnectionError", _unreachable),
    Rule("BadRequestError", _too_long_or_bad),
    Rule("APIStatusError", _status),
    Rule(
        "APIError",
        _simple(
            LLMCode.BAD_RESPONSE,
            "{where} sent an answer Margin could not understand.",
            "Try again.",
        ),
    ),
)


def map_error(
    exc: BaseException, *, where: str, sdk: Any = None, secret: str | None = None
) -> LLMError:
    """An exception from talking to a server as a sentence for people with a code."""
    text = redact(str(getattr(exc, "message", "") or exc), secret)
    if sdk is not None:
        for rule in RULES:
            cls = getattr(sdk, rule.sdk_class, None)
            if cls is not None and isinstance(exc, cls):
                return rule.make(exc, where, text)
    if isinstance(exc, TimeoutError):
        return LLMError(LLMCode.TIMEOUT, f"{where} stopped sending the answer.", hint=AGAIN)
    if isinstance(exc, ValueError):
        return LLMError(
            LLMCode.BAD_RESPONSE,
            f"{where} sent an answer Margin could not understand.",
            hint="Try again.",
        )
    return LLMError(
        LLMCode.UNEXPECTED,
        f"Something unexpected went wrong talking to {where}.",
        hint="Try again; the details are in the log file.",
    )

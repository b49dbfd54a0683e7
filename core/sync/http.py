"""One small HTTP client for sync servers and catalogues (stdlib ``urllib``): timeouts, a
size cap on what is read, and every failure as a ``SyncError`` naming the server."""

from __future__ import annotations

import logging
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from core.sync.errors import SyncError

log = logging.getLogger("margin.sync.http")

TIMEOUT_S = 15.0
MAX_BODY = 64 * 1024 * 1024  # a response larger than this is refused, never read whole


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    url: str = ""


class _NoRedirectErrors(urllib.request.HTTPErrorProcessor):
    """Every status comes back as a response (callers decide what 401 or 404 mean)."""

    def http_response(self, request, response):  # type: ignore[no-untyped-def]
        return response

    https_response = http_response


_opener = urllib.request.build_opener(_NoRedirectErrors())


def host_of(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return parts.netloc.rsplit("@", 1)[-1] or url


def request(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = TIMEOUT_S,
    max_body: int = MAX_BODY,
    what: str = "the server",
) -> Response:
    """``method url`` with ``headers``; the response whatever its status. Raises
    ``SyncError`` when the server cannot be reached, times out or sends more than
    ``max_body`` bytes."""
    if not url.startswith(("http://", "https://")):
        raise SyncError(
            "bad_address",
            f"{url!r} is not a web address.",
            hint="Use an address that starts with http:// or https://.",
        )
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    host = host_of(url)
    try:
        with _opener.open(req, timeout=timeout) as resp:
            length = resp.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > max_body:
                raise _too_large(what, host, max_body)
            data = resp.read(max_body + 1)
            if len(data) > max_body:
                raise _too_large(what, host, max_body)
            return Response(resp.status, data, dict(resp.headers.items()), resp.geturl())
    except SyncError:
        raise
    except TimeoutError as exc:
        log.info("%s %s timed out", method, host, exc_info=exc)
        raise SyncError(
            "timeout",
            f"{what.capitalize()} at {host} did not answer within {timeout:.0f} seconds.",
            hint="Check that it is running and try again.",
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        log.info("%s %s failed: %s", method, host, reason)
        raise SyncError(
            "unreachable",
            f"Margin could not reach {what} at {host} ({reason}).",
            hint="Check the address and your connection, then try again. Nothing was changed.",
        ) from None


def _too_large(what: str, host: str, limit: int) -> SyncError:
    return SyncError(
        "too_large",
        f"{what.capitalize()} at {host} sent more than {limit // (1024 * 1024)} MB; "
        "Margin stopped reading it.",
        hint="Check the address: it may not point at what you meant.",
    )


def server_failed(status: int, what: str, url: str, detail: str = "") -> SyncError:
    """The error for an unexpected status."""
    extra = f": {detail}" if detail else ""
    return SyncError(
        "server" if status >= 500 else "bad_response",
        f"{what.capitalize()} at {host_of(url)} answered with an error (HTTP {status}{extra}).",
        hint="Try again later; nothing was changed here."
        if status >= 500
        else "Check the address and settings.",
    )

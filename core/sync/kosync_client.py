"""The client side of koreader-sync-server's protocol, as KOReader's ``KOSyncClient``
speaks it: JSON bodies, ``Accept: application/vnd.koreader.v1+json``, and the user and the
MD5 of the password in ``x-auth-user`` / ``x-auth-key``.

Routes: ``POST /users/create`` (201, or 402 when the name is taken), ``GET /users/auth``
(200 ``{"authorized": "OK"}`` or 401), ``PUT /syncs/progress`` (200 ``{document,
timestamp}``), ``GET /syncs/progress/:document`` (200 with the fields, ``{}`` when none).
Errors come as ``{"code": N, "message": "…"}``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from core.sync.errors import SyncError
from core.sync.http import Response, host_of, request, server_failed

log = logging.getLogger("margin.sync.kosync")

ACCEPT = "application/vnd.koreader.v1+json"
WHAT = "the KOReader sync server"
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class RemoteProgress:
    """What the server keeps for a document."""

    document: str
    percentage: float
    progress: str  # an XPointer for reflowable books, a page number for PDFs
    device: str = ""
    device_id: str = ""
    timestamp: int = 0


class KosyncClient:
    def __init__(self, server: str, user: str, key: str) -> None:
        self.server = server.rstrip("/")
        self.user = user
        self.key = key  # the MD5 of the password, never the password itself

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, auth: bool = True
    ) -> tuple[Response, Any]:
        headers = {"Accept": ACCEPT}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if auth:
            headers["x-auth-user"] = self.user
            headers["x-auth-key"] = self.key
        resp = request(
            method, self.server + path, body=data, headers=headers, timeout=TIMEOUT_S, what=WHAT
        )
        try:
            parsed = json.loads(resp.body.decode("utf-8")) if resp.body.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            parsed = None
        if resp.status >= 500:
            raise server_failed(resp.status, WHAT, self.server, _message(parsed))
        if resp.status == 401:
            raise SyncError(
                "unauthorized",
                f"{WHAT.capitalize()} at {host_of(self.server)} did not accept the user "
                f"name {self.user!r} with that password.",
                hint="Log in again with 'margin kosync login' (or in Settings → Sync).",
            )
        if not isinstance(parsed, dict):
            raise SyncError(
                "bad_response",
                f"The server at {host_of(self.server)} does not answer like a KOReader sync "
                f"server (HTTP {resp.status}, not JSON).",
                hint="Check the address: KOReader's own is https://sync.koreader.rocks.",
            )
        return resp, parsed

    def register(self) -> bool:
        """Create the account; False when the name is already taken (402)."""
        resp, body = self._call(
            "POST", "/users/create", {"username": self.user, "password": self.key}, auth=False
        )
        if resp.status == 201:
            return True
        if resp.status == 402:
            if body.get("code") == 2005:
                raise SyncError(
                    "registration_disabled",
                    f"{WHAT.capitalize()} at {host_of(self.server)} does not take new accounts.",
                    hint="Ask its owner for an account, or use an account you have.",
                )
            return False
        raise server_failed(resp.status, WHAT, self.server, _message(body))

    def authorize(self) -> None:
        """Check the user and password (raises ``SyncError`` "unauthorized")."""
        resp, body = self._call("GET", "/users/auth")
        if resp.status != 200 or body.get("authorized") != "OK":
            raise server_failed(resp.status, WHAT, self.server, _message(body))

    def push(
        self, document: str, progress: str, percentage: float, device: str, device_id: str
    ) -> int:
        """Store progress; returns the server's timestamp."""
        resp, body = self._call(
            "PUT",
            "/syncs/progress",
            {
                "document": document,
                "progress": progress,
                "percentage": round(float(percentage), 4),
                "device": device,
                "device_id": device_id,
            },
        )
        if resp.status not in (200, 202):
            raise server_failed(resp.status, WHAT, self.server, _message(body))
        return int(body.get("timestamp") or 0)

    def pull(self, document: str) -> RemoteProgress | None:
        """The stored progress of ``document``; None when there is none."""
        from urllib.parse import quote

        resp, body = self._call("GET", "/syncs/progress/" + quote(document, safe=""))
        if resp.status != 200:
            raise server_failed(resp.status, WHAT, self.server, _message(body))
        if "percentage" not in body:
            return None
        try:
            return RemoteProgress(
                document=str(body.get("document", document)),
                percentage=min(1.0, max(0.0, float(body["percentage"]))),
                progress=str(body.get("progress", "")),
                device=str(body.get("device", "")),
                device_id=str(body.get("device_id", "")),
                timestamp=int(body.get("timestamp") or 0),
            )
        except (TypeError, ValueError):
            raise SyncError(
                "bad_response",
                f"{WHAT.capitalize()} at {host_of(self.server)} sent progress Margin cannot read.",
            ) from None


def _message(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"][:200]
    return ""

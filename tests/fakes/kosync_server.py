"""A loopback server that answers as koreader-sync-server does (its
``app/controllers/1/syncs_controller.lua``, ``config/routes.lua`` and ``config/errors.lua``):
the same routes, status codes and ``{"code", "message"}`` error bodies. The real one needs
OpenResty and Redis, which these machines do not have.

    with FakeKosync(registration=True) as server:
        server.add_user("reader", md5("secret"))
        ... KosyncClient(server.url, "reader", md5("secret")) ...
        server.fail_with = 500   # every request answers 502/500 from now on
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

ERRORS = {  # config/errors.lua
    1000: (502, "Cannot connect to redis server."),
    2000: (502, "Unknown server error."),
    2001: (401, "Unauthorized"),
    2002: (402, "Username is already registered."),
    2003: (403, "Invalid request"),
    2004: (403, "Field 'document' not provided."),
    2005: (402, "User registration is disabled."),
}
ACCEPT = "application/vnd.koreader.v1+json"


def _valid(field: Any) -> bool:
    return isinstance(field, str) and len(field) > 0


def _valid_key(field: Any) -> bool:
    return _valid(field) and ":" not in field


class FakeKosync:
    def __init__(self, *, registration: bool = False) -> None:
        self.registration = registration
        self.users: dict[str, str] = {}
        self.docs: dict[tuple[str, str], dict[str, Any]] = {}
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.fail_with: int | None = None
        self._server: ThreadingHTTPServer | None = None

    def add_user(self, name: str, key: str) -> None:
        self.users[name] = key

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeKosync:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, code: int) -> None:
                status, message = ERRORS[code]
                self._reply(status, {"code": code, "message": message})

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    return json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    return None

            def _auth(self) -> str | None:
                user = self.headers.get("x-auth-user")
                key = self.headers.get("x-auth-key")
                if _valid(key) and _valid_key(user) and fake.users.get(user or "") == key:
                    return user
                return None

            def _handle(self, method: str) -> None:
                body = self._body() if method in ("POST", "PUT") else {}
                fake.requests.append(
                    (method, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                if fake.fail_with is not None:
                    self._reply(fake.fail_with, {"code": 2000, "message": "Unknown server error."})
                    return
                if ACCEPT not in (self.headers.get("Accept") or ""):
                    # gin routes by the API version in Accept: without it no route matches
                    self._reply(404, {"code": 404, "message": "Not Found"})
                    return
                if body is None:
                    self._reply(400, {"code": 103, "message": "Could not parse JSON in body."})
                    return
                path = self.path.split("?", 1)[0]
                if method == "POST" and path == "/users/create":
                    self._create(body)
                elif method == "GET" and path == "/users/auth":
                    if self._auth():
                        self._reply(200, {"authorized": "OK"})
                    else:
                        self._error(2001)
                elif method == "PUT" and path == "/syncs/progress":
                    self._update(body)
                elif method == "GET" and path.startswith("/syncs/progress/"):
                    self._get(unquote(path[len("/syncs/progress/") :]))
                elif method == "GET" and path == "/healthcheck":
                    self._reply(200, {"state": "OK"})
                else:
                    self._reply(404, {"code": 404, "message": "Not Found"})

            def _create(self, body: dict[str, Any]) -> None:
                if not fake.registration:
                    self._error(2005)
                    return
                name, password = body.get("username"), body.get("password")
                if not _valid_key(name) or not _valid(password):
                    self._error(2003)
                elif name in fake.users:
                    self._error(2002)
                else:
                    fake.users[name] = password
                    self._reply(201, {"username": name})

            def _update(self, body: dict[str, Any]) -> None:
                user = self._auth()
                if not user:
                    self._error(2001)
                    return
                doc = body.get("document")
                if not _valid_key(doc):
                    self._error(2004)
                    return
                try:
                    percentage = float(body.get("percentage"))  # Lua's tonumber
                except (TypeError, ValueError):
                    percentage = None
                progress, device = body.get("progress"), body.get("device")
                if percentage is None or not progress or not device:
                    self._error(2003)
                    return
                stamp = int(time.time())
                fake.docs[(user, doc)] = {
                    "percentage": percentage,
                    "progress": progress,
                    "device": device,
                    "device_id": body.get("device_id"),
                    "timestamp": stamp,
                }
                self._reply(200, {"document": doc, "timestamp": stamp})

            def _get(self, doc: str) -> None:
                user = self._auth()
                if not user:
                    self._error(2001)
                    return
                if not _valid_key(doc):
                    self._error(2004)
                    return
                found = {k: v for k, v in fake.docs.get((user, doc), {}).items() if v is not None}
                if found:
                    found["document"] = doc
                self._reply(200, found)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_PUT(self) -> None:
                self._handle("PUT")

            def do_POST(self) -> None:
                self._handle("POST")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

"""A real WebDAV server for tests: wsgidav (PyPI) serving a folder on 127.0.0.1, a free port,
with Basic authentication, run on a thread of the test process.

    with WebDavServer(tmp_path / "dav", user="me", password="pw") as dav:
        ... dav.url ...
        dav.stop()   # the server goes away (a sync then finds it down)
"""

from __future__ import annotations

import io
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class WebDavServer:
    def __init__(self, root: Path, *, user: str = "", password: str = "") -> None:
        self.root = root
        self.user = user
        self.password = password
        self.requests = 0
        self._server: _Server | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def __enter__(self) -> WebDavServer:
        from wsgidav.wsgidav_app import WsgiDAVApp

        self.root.mkdir(parents=True, exist_ok=True)
        auth: dict[str, Any] = {"domain_controller": None}
        users: dict[str, Any] = {"*": True}
        if self.user:
            auth.update(accept_basic=True, accept_digest=False, default_to_digest=False)
            users = {"*": {self.user: {"password": self.password}}}
        app = WsgiDAVApp(
            {
                "provider_mapping": {"/": str(self.root)},
                "http_authenticator": auth,
                "simple_dc": {"user_mapping": users},
                "verbose": 0,
                "logging": {"enable_loggers": []},
                "lock_storage": True,
            }
        )

        def counted(environ: dict[str, Any], start_response: Any) -> Any:
            self.requests += 1
            # wsgidav reads a body until EOF, as cheroot's input ends at Content-Length;
            # wsgiref's is the socket itself, so end it there
            length = int(environ.get("CONTENT_LENGTH") or 0)
            environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(length))
            return app(environ, start_response)

        self._server = make_server(
            "127.0.0.1", 0, counted, server_class=_Server, handler_class=_Quiet
        )
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __exit__(self, *exc: object) -> None:
        self.stop()

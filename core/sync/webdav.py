"""A small WebDAV client (RFC 4918): the few methods sync needs — PROPFIND depth 1, GET,
PUT, MKCOL, MOVE — with Basic authentication, over ``core.sync.http``."""

from __future__ import annotations

import base64
import posixpath
import urllib.parse
import xml.etree.ElementTree as ET

from core.sync.errors import SyncError
from core.sync.http import MAX_BODY, TIMEOUT_S, Response, host_of, request, server_failed

WHAT = "the WebDAV server"
_DAV = "{DAV:}"
PROPFIND = (
    b'<?xml version="1.0" encoding="utf-8"?>'
    b'<propfind xmlns="DAV:"><prop><resourcetype/><getcontentlength/></prop></propfind>'
)


class WebDav:
    def __init__(self, url: str, user: str = "", password: str = "") -> None:
        self.url = url.rstrip("/") + "/"
        self.headers: dict[str, str] = {}
        if user:
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            self.headers["Authorization"] = f"Basic {token}"

    def _url(self, path: str) -> str:
        return urllib.parse.urljoin(self.url, urllib.parse.quote(path.lstrip("/")))

    def _do(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        max_body: int = MAX_BODY,
        **headers: str,
    ) -> Response:
        resp = request(
            method,
            self._url(path),
            body=body,
            headers={**self.headers, **{k.replace("_", "-"): v for k, v in headers.items()}},
            what=WHAT,
            max_body=max_body,
            timeout=TIMEOUT_S if max_body <= MAX_BODY else 300.0,
        )
        if resp.status == 401:
            raise SyncError(
                "unauthorized",
                f"{WHAT.capitalize()} at {host_of(self.url)} did not accept the user name "
                "and password.",
                hint="Check them in Settings → Sync (or [webdav] in settings.toml and the "
                "keyring, or MARGIN_WEBDAV_PASSWORD).",
            )
        if resp.status >= 500:
            raise server_failed(resp.status, WHAT, self.url)
        return resp

    def list(self, folder: str) -> list[tuple[str, bool]] | None:
        """(name, is_folder) of what ``folder`` holds; None when it does not exist."""
        folder = folder.strip("/") + "/" if folder.strip("/") else ""
        resp = self._do("PROPFIND", folder, PROPFIND, Depth="1", Content_Type="application/xml")
        if resp.status == 404:
            return None
        if resp.status != 207:
            raise server_failed(resp.status, WHAT, self.url)
        try:
            root = ET.fromstring(resp.body)
        except ET.ParseError:
            raise SyncError(
                "bad_response",
                f"{WHAT.capitalize()} at {host_of(self.url)} sent a listing Margin cannot read.",
            ) from None
        own = urllib.parse.urlsplit(self._url(folder)).path.rstrip("/")
        found = []
        for response in root.iter(f"{_DAV}response"):
            href = response.findtext(f"{_DAV}href") or ""
            path = urllib.parse.unquote(urllib.parse.urlsplit(href).path).rstrip("/")
            if path == urllib.parse.unquote(own):
                continue
            is_folder = response.find(f".//{_DAV}collection") is not None
            found.append((posixpath.basename(path), is_folder))
        return found

    def get(self, path: str, *, max_body: int = MAX_BODY) -> bytes | None:
        resp = self._do("GET", path, max_body=max_body)
        if resp.status == 404:
            return None
        if resp.status != 200:
            raise server_failed(resp.status, WHAT, self.url)
        return resp.body

    def put(self, path: str, data: bytes) -> None:
        resp = self._do("PUT", path, data, Content_Type="application/octet-stream")
        if resp.status not in (200, 201, 204):
            raise server_failed(resp.status, WHAT, self.url)

    def move(self, path: str, target: str) -> None:
        resp = self._do("MOVE", path, Destination=self._url(target), Overwrite="T")
        if resp.status not in (201, 204):
            raise server_failed(resp.status, WHAT, self.url)

    def mkdirs(self, folder: str) -> None:
        """Make ``folder`` and its parents (those that exist are left alone)."""
        built = ""
        for part in folder.strip("/").split("/"):
            built += part + "/"
            resp = self._do("MKCOL", built)
            if resp.status not in (201, 405, 301):  # 405: it exists
                raise server_failed(resp.status, WHAT, self.url)

"""Reading progress with KOReader: the use case behind ``margin kosync`` and the window.

A book is the document KOReader knows by its partial MD5 (or by the MD5 of its file name,
KOReader's second mode, ``checksum = "filename"``). Pushing sends Margin's page on screen as
KOReader writes positions (an XPointer for an EPUB, the page number for a PDF) with the
percentage; pulling moves Margin's page there and reports whether ``read_to`` would move:
the spoiler bound follows only the reader's choice (``apply_read_to``), never silently.
"""

from __future__ import annotations

import logging
import platform
from dataclasses import dataclass
from pathlib import Path

from core.paths import Paths
from core.store.anchors import BookText
from core.store.library import BookInfo, Library
from core.sync import config, secrets
from core.sync.errors import SyncError
from core.sync.kosync_client import KosyncClient, RemoteProgress
from core.sync.kosync_ids import filename_md5, partial_md5, password_key

log = logging.getLogger("margin.sync.kosync")

TABLE = "kosync"
DEFAULT_SERVER = "https://sync.koreader.rocks"


@dataclass(frozen=True)
class KosyncAccount:
    server: str
    user: str
    device: str
    device_id: str
    checksum: str = "binary"  # KOReader's modes: "binary" (partial MD5) | "filename"


@dataclass(frozen=True)
class Progress:
    """A position as both sides name it."""

    document: str
    percentage: float
    progress: str  # XPointer (EPUB) or page number (PDF, other books)
    page: int
    offset: int = 0


@dataclass(frozen=True)
class Pulled:
    """What a pull found and did. ``moved``: the page on screen moved to ``page``;
    ``read_to_offer``: ``read_to`` is elsewhere and the reader may move it there."""

    document: str
    percentage: float
    progress: str
    page: int
    offset: int
    device: str
    moved: bool
    read_to: int
    read_to_offer: bool
    approximate: bool = False


def account(paths: Paths) -> KosyncAccount | None:
    values = config.table(paths, TABLE)
    if not values.get("server") or not values.get("user"):
        return None
    return KosyncAccount(
        server=str(values["server"]),
        user=str(values["user"]),
        device=str(values.get("device") or f"Margin ({platform.node() or 'computer'})"),
        device_id=str(values.get("device_id") or config.device_id(paths)),
        checksum="filename" if values.get("checksum") == "filename" else "binary",
    )


def login(paths: Paths, server: str, user: str, password: str, *, register: bool = False) -> str:
    """Check (or first create) the account, then keep it: the server and user in
    ``[kosync]``, the password in the keyring. Returns where the password went."""
    if not user or ":" in user:
        raise SyncError("bad_user", "The user name must not be empty or contain ':'.")
    if not password:
        raise SyncError("no_password", "No password was given.")
    client = KosyncClient(server, user, password_key(password))
    if register and not client.register():
        log.info("kosync: %s already registered; checking the password", user)
    client.authorize()
    values = config.table(paths, TABLE)
    values.update(server=server.rstrip("/"), user=user)
    config.save_table(paths, TABLE, values)
    return secrets.set_password("kosync", server.rstrip("/"), user, password)


def logout(paths: Paths) -> None:
    acc = account(paths)
    if acc is not None:
        secrets.delete_password("kosync", acc.server, acc.user)
    config.save_table(paths, TABLE, {})


class Kosync:
    def __init__(self, library: Library, paths: Paths) -> None:
        self.library = library
        self.paths = paths
        acc = account(paths)
        if acc is None:
            raise SyncError(
                "not_configured",
                "KOReader progress sync is not set up.",
                hint="Log in first: margin kosync login --server URL --user NAME.",
            )
        self.account = acc
        password = secrets.get_password("kosync", acc.server, acc.user)
        if not password:
            raise SyncError(
                "no_password",
                f"Margin has no password for {acc.user} at {acc.server}.",
                hint="Log in again, or set MARGIN_KOSYNC_PASSWORD.",
            )
        self.client = KosyncClient(acc.server, acc.user, password_key(password))

    def document_id(self, book: BookInfo) -> str:
        if self.account.checksum == "filename":
            return filename_md5(Path(book.original_path or book.file_path).name)
        path = Path(book.file_path)
        if not path.is_file():
            raise SyncError(
                "not_found",
                f"The copy of {book.title!r} is missing ({path}).",
                hint="Import the book again.",
            )
        return partial_md5(path)

    def _pages(self, book: BookInfo) -> BookText:
        return BookText(self.library.page_texts(book.id))

    def local(self, book: BookInfo, offset: int = 0) -> Progress:
        """Margin's page on screen as KOReader names positions."""
        doc = self.document_id(book)
        if book.format == "epub":
            from core.sync.xpointer import from_margin, positions_of

            pages = self._pages(book)
            at = pages.position(book.page, offset)
            fraction = round(at / max(1, len(pages.text)), 4)
            xp = from_margin(positions_of(Path(book.file_path)), pages, book.page, offset)
            if xp is not None:
                return Progress(doc, fraction, xp, book.page, offset)
        fraction = round(book.page / max(1, book.page_count), 4)
        return Progress(doc, fraction, str(book.page), book.page, offset)

    def push(self, book: BookInfo) -> Progress:
        here = self.local(book)
        self.client.push(
            here.document,
            here.progress,
            here.percentage,
            self.account.device,
            self.account.device_id,
        )
        return here

    def remote(self, book: BookInfo) -> RemoteProgress | None:
        return self.client.pull(self.document_id(book))

    def place_of(self, book: BookInfo, remote: RemoteProgress) -> tuple[int, int, bool]:
        """(page, offset, approximate) in Margin for the remote position."""
        if book.format == "epub" and remote.progress.startswith("/"):
            from core.sync.xpointer import positions_of, to_margin

            place = to_margin(
                positions_of(Path(book.file_path)),
                self._pages(book),
                remote.progress,
                remote.percentage,
            )
            if place is not None:
                return place.page, place.offset, place.fuzzy
        if remote.progress.isdigit() and book.format == "pdf":
            return max(1, min(int(remote.progress), book.page_count)), 0, False
        page = max(1, min(book.page_count, round(remote.percentage * book.page_count) or 1))
        return page, 0, True

    def pull(self, book: BookInfo, *, apply_read_to: bool = False) -> Pulled | None:
        """Move the page on screen to the remote position (None: the server has none).
        ``read_to`` moves only with ``apply_read_to``."""
        remote = self.remote(book)
        if remote is None:
            return None
        page, offset, approximate = self.place_of(book, remote)
        moved = page != book.page
        if moved:
            book = self.library.set_page(book.id, page)
        if apply_read_to and book.read_to != page:
            book = self.library.set_read_to(book.id, page)
        return Pulled(
            document=remote.document,
            percentage=remote.percentage,
            progress=remote.progress,
            page=page,
            offset=offset,
            device=remote.device,
            moved=moved,
            read_to=book.read_to,
            read_to_offer=book.read_to != page,
            approximate=approximate,
        )

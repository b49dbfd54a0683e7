"""Sync between the reader's own computers through a WebDAV folder.

Each device appends its own change files (``FOLDER/DEVICE/NNNNNNNN-RANDOM.json``) and
never writes another device's; it reads every file of the others it has not read yet. A
sync: (1) compares Margin's tables with what was last synced (``sync_record``) and records
what changed locally — new, edited, deleted (a tombstone) — in the outbox; (2) sends the
outbox as one new file (written under a hidden name, then moved into place); (3) reads the
other devices' new files in order and merges each change (``core.sync.merge``). A file that
cannot be read whole (still being written, cut off) is left for next time, with the files
after it from that device. Offline, the outbox waits; after a long gap, every file not read
yet is read. Records of books this device does not have wait until it has them.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import peewee as pw

from core.sync import records as rec
from core.sync.merge import Version, clock, resolve
from core.sync.webdav import WebDav

log = logging.getLogger("margin.sync")

FORMAT = 1


@dataclass
class SyncReport:
    sent: int = 0
    received: int = 0
    copies: int = 0  # records edited on two devices at once: both versions kept
    waiting: int = 0  # records for books this device does not have (yet)
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"sent {self.sent} change{'s' * (self.sent != 1)}"]
        parts.append(f"received {self.received}")
        if self.copies:
            parts.append(f"{self.copies} edited on two computers at once (both versions kept)")
        if self.waiting:
            parts.append(f"{self.waiting} waiting for books this computer does not have")
        return ", ".join(parts) + "."


@dataclass
class _Record:
    uid: str
    kind: str
    local_id: int | None
    book: str
    counter: int
    device: str
    base: str
    hash: str
    payload: dict[str, Any]
    deleted: bool
    outbox: bool
    applied: bool

    @property
    def version(self) -> Version:
        return Version(self.counter, self.device, self.base, self.deleted, self.payload)


_COLUMNS = (
    "uid, kind, local_id, book, counter, device, base, hash, payload, deleted, outbox, applied"
)


def _record(row: Iterable[Any]) -> _Record:
    uid, kind, local_id, book, counter, device, base, hsh, payload, deleted, outbox, applied = row
    return _Record(
        uid,
        kind,
        local_id,
        book,
        counter,
        device,
        base,
        hsh,
        json.loads(payload),
        bool(deleted),
        bool(outbox),
        bool(applied),
    )


class SyncEngine:
    def __init__(
        self,
        db: pw.SqliteDatabase,
        device: str,
        dav: WebDav,
        folder: str,
        *,
        books: Callable[[Path], Any] | None = None,
        data_dir: Path | None = None,
    ) -> None:
        self.db = db
        self.device = device
        self.dav = dav
        self.folder = folder.strip("/") or "Margin"
        self.books = books  # imports a book file: the books themselves travel too
        self.data_dir = data_dir or Path(".")

    # state ------------------------------------------------------------------------------

    def _meta(self, key: str, default: int = 0) -> int:
        row = self.db.execute_sql("SELECT value FROM sync_meta WHERE key = ?", (key,)).fetchone()
        return default if row is None else int(row[0])

    def _set_meta(self, key: str, value: int) -> None:
        self.db.execute_sql(
            "INSERT OR REPLACE INTO sync_meta (key, value) VALUES (?, ?)", (key, str(value))
        )

    def _tick(self) -> int:
        value = self._meta("lamport") + 1
        self._set_meta("lamport", value)
        return value

    def _seen_clock(self, counter: int) -> None:
        if counter > self._meta("lamport"):
            self._set_meta("lamport", counter)

    def _get(self, uid: str) -> _Record | None:
        row = self.db.execute_sql(
            f"SELECT {_COLUMNS} FROM sync_record WHERE uid = ?", (uid,)
        ).fetchone()
        return None if row is None else _record(row)

    def _save(self, r: _Record) -> None:
        self.db.execute_sql(
            f"INSERT OR REPLACE INTO sync_record ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                r.uid,
                r.kind,
                r.local_id,
                r.book,
                r.counter,
                r.device,
                r.base,
                r.hash,
                json.dumps(r.payload, ensure_ascii=False, default=str),
                int(r.deleted),
                int(r.outbox),
                int(r.applied),
            ),
        )

    # 1. what changed here ---------------------------------------------------------------

    def collect(self) -> int:
        """Record local changes in the outbox; returns how many."""
        changed = 0
        with self.db.atomic():
            known: dict[tuple[str, int], _Record] = {}
            for row in self.db.execute_sql(
                f"SELECT {_COLUMNS} FROM sync_record WHERE applied = 1 AND deleted = 0 "
                "AND local_id IS NOT NULL"
            ):
                r = _record(row)
                known[(r.kind, r.local_id or 0)] = r
            books = {
                sha
                for (sha,) in self.db.execute_sql("SELECT sha256 FROM book WHERE status = 'ready'")
            }
            for kind in rec.KINDS:
                present: set[int] = set()
                for row in rec.rows(self.db, kind):
                    present.add(row.local_id)
                    parent = ""
                    if kind.parent:
                        owner = known.get((kind.parent, row.parent_id))
                        if owner is None:
                            continue
                        parent = owner.uid
                    payload = {"book": row.book, "parent": parent, **row.data}
                    digest = rec.digest(payload)
                    old = known.get((kind.name, row.local_id))
                    if old is not None and old.hash == digest:
                        continue
                    if old is None and kind.per_book:  # one uid on every device
                        old = self._get(self._new_uid(kind, row.book))
                    changed += 1
                    new = _Record(
                        uid=old.uid if old else self._new_uid(kind, row.book),
                        kind=kind.name,
                        local_id=row.local_id,
                        book=row.book,
                        counter=self._tick(),
                        device=self.device,
                        base=old.version.clock if old else "",
                        hash=digest,
                        payload=payload,
                        deleted=False,
                        outbox=True,
                        applied=True,
                    )
                    self._save(new)
                    known[(kind.name, row.local_id)] = new
                for (name, local_id), old in list(known.items()):
                    if name != kind.name or local_id in present:
                        continue
                    if old.book not in books:  # the book left this device: keep for later
                        old.applied, old.local_id = False, None
                        self._save(old)
                        self.db.execute_sql(  # removed here on purpose: never fetched back
                            "INSERT OR IGNORE INTO sync_seen VALUES (?)", (f"dropped:{old.book}",)
                        )
                        continue
                    changed += 1
                    self._save(
                        _Record(
                            old.uid,
                            old.kind,
                            None,
                            old.book,
                            self._tick(),
                            self.device,
                            old.version.clock,
                            "",
                            {},
                            True,
                            True,
                            True,
                        )
                    )
        return changed

    def _new_uid(self, kind: rec.Kind, book: str) -> str:
        return f"{kind.name}:{book}" if kind.per_book else uuid.uuid4().hex

    # 2. send ----------------------------------------------------------------------------

    def send(self) -> int:
        rows = [
            _record(r)
            for r in self.db.execute_sql(f"SELECT {_COLUMNS} FROM sync_record WHERE outbox = 1")
        ]
        if not rows:
            return 0
        changes = [
            {
                "uid": r.uid,
                "kind": r.kind,
                "book": r.book,
                "counter": r.counter,
                "device": r.device,
                "base": r.base,
                "deleted": r.deleted,
                "data": None if r.deleted else r.payload,
            }
            for r in rows
        ]
        seq = self._meta("sent") + 1
        name = f"{seq:08d}-{uuid.uuid4().hex[:8]}.json"
        body = json.dumps(
            {"format": FORMAT, "device": self.device, "count": len(changes), "changes": changes},
            ensure_ascii=False,
            default=str,
        ).encode("utf-8")
        mine = f"{self.folder}/{self.device}"
        self.dav.mkdirs(mine)
        self.dav.put(f"{mine}/.{name}.part", body)
        self.dav.move(f"{mine}/.{name}.part", f"{mine}/{name}")
        with self.db.atomic():
            for r in rows:
                self.db.execute_sql(
                    "UPDATE sync_record SET outbox = 0 WHERE uid = ? AND counter = ? "
                    "AND device = ?",
                    (r.uid, r.counter, r.device),
                )
            self._set_meta("sent", seq)
        return len(rows)

    # 3. receive -------------------------------------------------------------------------

    def receive(self, report: SyncReport) -> None:
        devices = self.dav.list(self.folder) or []
        seen = {n for (n,) in self.db.execute_sql("SELECT name FROM sync_seen")}
        for device, is_folder in sorted(devices):
            if not is_folder or device == self.device:
                continue
            files = self.dav.list(f"{self.folder}/{device}") or []
            names = sorted(
                n for n, d in files if not d and n.endswith(".json") and not n.startswith(".")
            )
            for name in names:
                key = f"{device}/{name}"
                if key in seen:
                    continue
                data = self.dav.get(f"{self.folder}/{key}")
                changes = _changes_of(data, device)
                if changes is None:
                    report.problems.append(
                        f"A change file from another computer ({name}) is incomplete or "
                        "damaged; it and the later ones from that computer will be read "
                        "at the next sync."
                    )
                    log.warning("sync: unreadable change file %s", key)
                    break
                with self.db.atomic():
                    for change in changes:
                        report.received += 1
                        report.copies += self.apply(change)
                    self.db.execute_sql("INSERT OR IGNORE INTO sync_seen VALUES (?)", (key,))

    def apply(self, change: dict[str, Any]) -> int:
        """Merge one change from another device; returns 1 when a copy was kept."""
        kind = rec.BY_NAME.get(str(change.get("kind")))
        if kind is None:
            return 0  # a kind a newer Margin syncs: ignored here
        remote = Version(
            int(change["counter"]),
            str(change["device"]),
            str(change.get("base") or ""),
            bool(change.get("deleted")),
            change.get("data") or {},
        )
        self._seen_clock(remote.counter)
        uid = str(change["uid"])
        old = self._get(uid)
        if old is None:
            fresh = _Record(
                uid,
                kind.name,
                None,
                str(change.get("book") or ""),
                remote.counter,
                remote.device,
                remote.base,
                "",
                remote.data or {},
                remote.deleted,
                False,
                remote.deleted,
            )
            if not remote.deleted:
                self._materialize(kind, fresh)
            self._save(fresh)
            return 0
        winner, copy = resolve(old.version, remote)
        if winner is remote:
            old.counter, old.device, old.base = remote.counter, remote.device, remote.base
            old.outbox = False
            if remote.deleted:
                if old.local_id is not None and old.applied:
                    rec.delete(self.db, kind, old.local_id)
                old.local_id, old.deleted, old.payload, old.hash = None, True, {}, ""
                old.applied = True
            else:
                old.deleted, old.payload = False, remote.data or {}
                if not old.applied:
                    old.local_id = None
                self._materialize(kind, old)
            self._save(old)
        if copy is None or kind.name not in rec.COPIED_ON_CONFLICT:
            return 0
        copy_uid = f"{uid}~{copy.clock}"
        if self._get(copy_uid) is None:
            kept = _Record(
                copy_uid,
                kind.name,
                None,
                str((copy.data or {}).get("book", "")),
                copy.counter,
                copy.device,
                "",
                "",
                dict(copy.data or {}),
                False,
                False,
                False,
            )
            self._materialize(kind, kept)
            self._save(kept)
        return 1

    def _materialize(self, kind: rec.Kind, r: _Record) -> None:
        """Write ``r.payload`` into Margin's tables (``applied`` False while its book, or
        its conversation, is not here)."""
        book = rec.book_id(self.db, str(r.payload.get("book", "")))
        parent = 0
        if kind.parent:
            owner = self._get(str(r.payload.get("parent", "")))
            parent = owner.local_id if owner and owner.applied and owner.local_id else 0
        if book is None or (kind.parent and not parent):
            r.applied, r.local_id = False, None
            return
        data = {k: v for k, v in r.payload.items() if k not in ("book", "parent")}
        r.local_id = rec.write(self.db, kind, r.local_id, book, parent, data)
        r.applied = True
        back = next(rec.rows(self.db, kind, only=r.local_id), None)
        if back is not None:
            r.payload = {"book": back.book, "parent": r.payload.get("parent", ""), **back.data}
            r.hash = rec.digest(r.payload)

    def retry_waiting(self) -> int:
        """Records whose book (or conversation) came since: written now. Returns how many
        still wait."""
        waiting = 0
        with self.db.atomic():
            for kind in rec.KINDS:  # parents first
                for row in list(
                    self.db.execute_sql(
                        f"SELECT {_COLUMNS} FROM sync_record WHERE applied = 0 AND deleted = 0 "
                        "AND kind = ?",
                        (kind.name,),
                    )
                ):
                    r = _record(row)
                    self._materialize(kind, r)
                    self._save(r)
                    waiting += not r.applied
        return waiting

    def run(self) -> SyncReport:
        report = SyncReport()
        self.retry_waiting()  # a book imported since: its records first, then local changes
        self.collect()
        report.sent = self.send()
        if self.books is not None:
            from core.sync.book_files import fetch_books, send_books

            send_books(self.db, self.dav, self.folder, self.data_dir)
        self.receive(report)
        if self.books is not None:
            _, problems = fetch_books(self.db, self.dav, self.folder, self.books)
            report.problems.extend(problems)
        report.waiting = self.retry_waiting()
        return report


def _changes_of(data: bytes | None, device: str) -> list[dict[str, Any]] | None:
    """The changes of a whole, well-formed change file; None when it is not one."""
    if data is None:
        return None
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        return None
    changes = body.get("changes")
    if not isinstance(changes, list) or body.get("count") != len(changes):
        return None
    if body.get("device") != device:
        return None
    ok = all(
        isinstance(c, dict)
        and {"uid", "kind", "counter", "device"} <= c.keys()
        and isinstance(c["counter"], int)
        for c in changes
    )
    return changes if ok else None


__all__ = ["SyncEngine", "SyncReport", "clock"]

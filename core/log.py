"""Logging to a rotating file in the data folder. Tracebacks go there, never to readers."""

from __future__ import annotations

import logging
import os
import re
import threading

from core.paths import Paths

LOG_NAME = "margin.log"
_SECRET = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{8,}|(?i:bearer)\s+[A-Za-z0-9_\-\.]{16,})")


_registered: set[str] = set()
_registered_lock = threading.Lock()
MIN_SECRET = 6  # shorter values would redact ordinary words


def register_secret(value: str | None) -> None:
    """Never write ``value`` (the configured API key, whatever its form) to the log."""
    if value and len(value.strip()) >= MIN_SECRET:
        with _registered_lock:
            _registered.add(value.strip())


def redact(text: str) -> str:
    """``text`` without registered secrets or anything shaped like an API key."""
    for secret in sorted(_registered, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, "[redacted]")
    return _SECRET.sub("[redacted]", text)


class RedactSecrets(logging.Filter):
    """Replaces registered secrets and anything shaped like an API key before a record is
    written — in the message and in the traceback (exception text can quote a server)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(text)
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


class QuietFileHandler(logging.FileHandler):
    """Appends to ``margin.log``; past ``max_bytes`` the file becomes ``margin.log.1`` (the
    older ones ``.2`` … ``.{backups}``, the oldest dropped) and a new one starts. Its own
    rotation, not ``logging.handlers``: that module (with socket, pickle and queue) cost
    ~7 ms of CPU before the window's first paint, and every record, the first one included,
    goes straight to the file. A full disk (or a log folder gone) must not print a traceback
    per record: records that cannot be written are dropped."""

    def __init__(self, path: os.PathLike[str] | str, *, max_bytes: int, backups: int) -> None:
        super().__init__(path, mode="a", encoding="utf-8")
        self.max_bytes = max_bytes
        self.backups = backups

    def emit(self, record: logging.LogRecord) -> None:
        try:
            super().emit(record)  # (reopens the file first when a roll-over could not)
            if self.stream is not None and self.stream.tell() >= self.max_bytes:
                self.roll_over()
        except Exception:
            self.handleError(record)

    def roll_over(self) -> None:
        """``margin.log`` → ``margin.log.1`` → … → ``margin.log.{backups}``; a new file."""
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        base = self.baseFilename
        for n in range(self.backups - 1, 0, -1):
            if os.path.exists(f"{base}.{n}"):
                os.replace(f"{base}.{n}", f"{base}.{n + 1}")
        if self.backups > 0:
            os.replace(base, f"{base}.1")
        else:
            os.remove(base)
        self.stream = self._open()

    def handleError(self, record: logging.LogRecord) -> None:
        return


def setup_logging(paths: Paths, *, level: int = logging.INFO) -> logging.Handler:
    """Send Margin's logs to ``<data>/logs/margin.log`` (1 MB × 5 files). Idempotent for the
    same folder; a different folder replaces the previous log file."""
    root = logging.getLogger()
    target = str((paths.logs / LOG_NAME).resolve())
    for existing in list(root.handlers):
        if getattr(existing, "_margin", False):
            if getattr(existing, "baseFilename", "") == target:
                return existing
            root.removeHandler(existing)
            existing.close()
    paths.logs.mkdir(parents=True, exist_ok=True)
    handler = QuietFileHandler(paths.logs / LOG_NAME, max_bytes=1_000_000, backups=5)
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s")
    )
    handler.addFilter(RedactSecrets())
    handler._margin = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(min(root.level or level, level))
    for noisy in ("httpx", "httpcore", "httpx2", "anthropic", "peewee"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler

"""Logging to a rotating file in the data folder. Tracebacks go there, never to readers."""

from __future__ import annotations

import logging
import logging.handlers
import re

from core.paths import Paths

LOG_NAME = "margin.log"
_SECRET = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{8,}|(?i:bearer)\s+[A-Za-z0-9_\-\.]{16,})")


class RedactSecrets(logging.Filter):
    """Replaces anything shaped like an API key before a record is written."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if _SECRET.search(message):
            record.msg = _SECRET.sub("[redacted]", message)
            record.args = None
        return True


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
    handler = logging.handlers.RotatingFileHandler(
        paths.logs / LOG_NAME, maxBytes=1_000_000, backupCount=5, encoding="utf-8"
    )
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

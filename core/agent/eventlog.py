"""A JSONL event log per conversation, for looking at what the agent did and why.

``LLM_INVOCATION`` records hold a summary of the request (shape, not the book text), the
response (stop reason, text excerpt, tool calls), usage and duration; ``TOOL_CALL`` records
hold the name, parameters, an excerpt of the output and the duration. Never the API key:
nothing from the client or its headers is written here.

The companions (X-Ray notes, recaps, quiz questions) keep one log per book
(``core.paths.companions_log_name``), written the same way by ``core.companions.trace``.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path
from typing import Any

from core.paths import event_log_name

log = logging.getLogger("margin.eventlog")
EXCERPT = 500


def excerpt(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= EXCERPT else text[:EXCERPT] + "…"


class EventLog:
    def __init__(self, folder: Path, conversation_id: int) -> None:
        self.path = folder / event_log_name(conversation_id)

    @classmethod
    def named(cls, folder: Path, name: str) -> EventLog:
        """A log in ``folder`` under ``name`` (a book's companions log)."""
        made = cls.__new__(cls)
        made.path = folder / name
        return made

    def write(self, kind: str, /, **fields: Any) -> None:
        record = {
            "ts": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "type": kind,
            **fields,
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        except OSError as exc:  # the log must never break an answer
            log.warning("could not write the event log %s: %s", self.path, exc)

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        records: list[dict[str, Any]] = []
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            log.warning("could not read the event log %s: %s", self.path, exc)
            return records
        for line in lines:
            if not line.strip():
                continue
            try:  # a line cut short (a crash while writing) is skipped, not fatal
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records

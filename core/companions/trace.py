"""The companions' model calls in the event log: one JSONL file per book
(``events/companions-book-N.jsonl``, ``core.agent.eventlog``), written as the chat writes a
conversation's — a ``JOB_STARTED`` line, an ``LLM_INVOCATION`` per call (request summary,
stop reason, reply excerpt, tokens, time, sentences withheld), a ``SPOILER_CHECK`` per
sentence the answer check withheld, a ``JOB_FINISHED`` line — and read back per job for
``margin xray|recap|cards --trace`` and the tabs' "Show trace". Never the API key: nothing
of the client is written, and an error's text is scrubbed of anything shaped like a key."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.agent.eventlog import EventLog
from core.domain.messages import Usage
from core.domain.pricing import estimate_cost
from core.paths import companions_log_name

KEY_SHAPE = re.compile(r"sk-[A-Za-z0-9_\-]{8,}")
WHAT_KINDS = {"recap": "recap", "notes": "xray_note", "quiz": "quiz"}  # model.plan's flags
USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
KIND_WORDS = {"recap": "summary", "xray_note": "note", "quiz": "quiz"}


def scrub(text: str) -> str:
    return KEY_SHAPE.sub("sk-…", text)


def log_for(folder: Path, book_id: int) -> EventLog:
    return EventLog.named(folder, companions_log_name(book_id))


class JobTrace:
    """Writes one job's lines (``model.run`` holds one)."""

    def __init__(self, folder: Path | None, book_id: int) -> None:
        self.log = log_for(folder, book_id) if folder is not None else None
        self.job_id = uuid.uuid4().hex[:12]

    def write(self, kind: str, /, **fields: Any) -> None:
        if self.log is not None:
            self.log.write(kind, job_id=self.job_id, **fields)


@dataclass
class CallTrace:
    step: int
    kind: str
    title: str
    stop_reason: str
    usage: Usage
    duration_ms: float
    withheld: int
    error: str = ""
    terms: list[str] = field(default_factory=list)
    stopped: bool = False  # Stop came while the reply was coming

    def line(self) -> str:
        """ "CHAPTER I (summary): 100 in, 20 out tokens · end_turn · 35 ms · 1 sentence withheld" """
        head = f"{self.step}. {self.title} ({KIND_WORDS.get(self.kind, self.kind)})"
        if self.stopped:
            return f"{head}: stopped during the reply, {self.duration_ms:,.0f} ms"
        if self.error:
            return f"{head}: failed — {self.error}"
        bits = [
            f"{self.usage.input_tokens:,} in, {self.usage.output_tokens:,} out tokens",
            self.stop_reason or "no stop reason",
            f"{self.duration_ms:,.0f} ms",
        ]
        if self.withheld:
            unit = "question" if self.kind == "quiz" else "sentence"
            plural = "" if self.withheld == 1 else "s"
            words = f" ({', '.join(self.terms[:4])})" if self.terms else ""
            bits.append(f"{self.withheld} {unit}{plural} withheld{words}")
        return f"{head}: " + " · ".join(bits)


@dataclass
class Job:
    job_id: str
    started: str
    model: str = ""
    provider: str = ""
    spoiler_bound: int = 0
    planned: int = 0
    estimate: str = ""
    status: str = "running"  # or "done", "stopped", "failed" (or "interrupted": no end line)
    error: str = ""
    calls: list[CallTrace] = field(default_factory=list)
    planned_kinds: set[str] = field(default_factory=set)

    @property
    def kinds(self) -> set[str]:
        return {c.kind for c in self.calls}

    @property
    def usage(self) -> Usage:
        return Usage(
            sum(c.usage.input_tokens for c in self.calls),
            sum(c.usage.output_tokens for c in self.calls),
            sum(c.usage.cache_read_tokens for c in self.calls),
            sum(c.usage.cache_write_tokens for c in self.calls),
        )

    def heading(self) -> str:
        """ "2026-11-25 20:14 · claude-haiku-4-5 · 4 of 4 calls · done · 400 in, 80 out tokens,
        about $0.0007 · bound p. 33" """
        usage = self.usage
        cost = estimate_cost(self.model, usage) if self.model else None
        money = f", about ${cost:.4f}" if cost else ""
        bits = [
            self.started[:16].replace("T", " ") + " UTC",
            f"{self.provider} · {self.model}" if self.provider else self.model,
            f"{len(self.calls)} of {self.planned} calls",
            self.status + (f" ({self.error})" if self.error else ""),
            f"{usage.input_tokens:,} in, {usage.output_tokens:,} out tokens{money}",
            f"read to p. {self.spoiler_bound}",
        ]
        return " · ".join(b for b in bits if b)

    def to_json(self) -> dict[str, Any]:
        return {
            "job_id": self.job_id,
            "started": self.started,
            "provider": self.provider,
            "model": self.model,
            "spoiler_bound": self.spoiler_bound,
            "planned": self.planned,
            "estimate": self.estimate,
            "status": self.status,
            "error": self.error,
            "usage": self.usage.__dict__,
            "calls": [
                {**c.__dict__, "usage": c.usage.__dict__, "line": c.line()} for c in self.calls
            ],
        }


def jobs(folder: Path, book_id: int, kinds: set[str] | None = None, last: int = 0) -> list[Job]:
    """The book's companion jobs as the log has them, oldest first; with ``kinds``, only jobs
    that planned calls of those kinds; with ``last``, only that many of the newest."""
    out: dict[str, Job] = {}
    for record in log_for(folder, book_id).read():
        job_id = str(record.get("job_id", ""))
        kind = record.get("type")
        if kind == "JOB_STARTED":
            out[job_id] = Job(
                job_id,
                str(record.get("ts", "")),
                model=str(record.get("model", "")),
                provider=str(record.get("provider", "")),
                spoiler_bound=int(record.get("spoiler_bound", 0)),
                planned=int(record.get("calls", 0)),
                estimate=str(record.get("estimate", "")),
                status="interrupted",
                planned_kinds={str(k) for k in record.get("kinds", [])},
            )
            continue
        job = out.get(job_id)
        if job is None:
            continue
        if kind == "LLM_INVOCATION":
            response = record.get("response") or {}
            u = record.get("usage") or {}
            job.calls.append(
                CallTrace(
                    step=int(record.get("step", 0)),
                    kind=str(record.get("kind", "")),
                    title=str(record.get("title", "")),
                    stop_reason=str(response.get("stop_reason", "")),
                    usage=Usage(**{k: int(v) for k, v in u.items() if k in USAGE_FIELDS}),
                    duration_ms=float(record.get("duration_ms", 0.0)),
                    withheld=int(record.get("withheld", 0)),
                    error=str(response.get("error", "")),
                    terms=[str(t) for t in record.get("terms", [])],
                    stopped=bool(response.get("stopped")),
                )
            )
        elif kind == "JOB_FINISHED":
            job.status = str(record.get("status", ""))
            job.error = str(record.get("error") or "")
    found = list(out.values())
    if kinds:
        found = [j for j in found if j.planned_kinds & kinds]
    return found[-last:] if last else found


def kinds_of(what: dict[str, bool]) -> set[str]:
    """The call kinds a job of ``model.plan(**what)`` makes."""
    return {kind for flag, kind in WHAT_KINDS.items() if what.get(flag, flag != "quiz")}


def text(found: list[Job]) -> str:
    """Plain text of ``found`` (the CLI prints it)."""
    if not found:
        return "No model calls yet."
    lines: list[str] = []
    for job in found:
        lines.append(job.heading())
        lines += [f"  {c.line()}" for c in job.calls] or ["  (no calls made)"]
    return "\n".join(lines)
